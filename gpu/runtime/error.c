/** @file error.c
 *  @brief Thread-local last-error slot (see error.h).
 */
#include "error.h"

#include <stdarg.h>
#include <stdio.h>

static _Thread_local char last_msg[1024];
static _Thread_local int last_code;

int xg_set_error(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_msg, sizeof last_msg, fmt, ap);
    va_end(ap);
    /* One line, always: fold any newline a message may carry. */
    for (char *p = last_msg; *p; ++p)
        if (*p == '\n' || *p == '\r')
            *p = ' ';
    last_code = code;
    return code;
}

const char *xg_last_error(void) { return last_msg; }

int xg_last_error_code(void) { return last_code; }

void xg_clear_error(void)
{
    last_msg[0] = '\0';
    last_code = XG_OK;
}

const char *xg_status_name(int code)
{
    switch (code) {
    case XG_OK: return "ok";
    case XG_ERR_IO: return "io";
    case XG_ERR_FORMAT: return "format";
    case XG_ERR_CHECKSUM: return "checksum";
    case XG_ERR_VERSION: return "version";
    case XG_ERR_STALE: return "stale";
    case XG_ERR_XAPIAN: return "xapian";
    case XG_ERR_UNSUPPORTED: return "unsupported";
    case XG_ERR_NOMEM: return "nomem";
    case XG_ERR_ARG: return "arg";
    case XG_ERR_CUDA: return "cuda";
    case XG_ERR_NODEVICE: return "nodevice";
    }
    return "unknown";
}
