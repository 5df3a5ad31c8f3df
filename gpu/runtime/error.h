/** @file error.h
 *  @brief Status codes and the one thread-local last-error message.
 *
 *  Every fallible function in the project returns an `int` from
 *  `enum xg_status` (XG_OK = 0, negative on error) and hands results back
 *  through pointers.  The message that explains a failure is set with
 *  xg_set_error() and read with xg_last_error(); it is one line that names
 *  the file (or object) and the fault.  Any nonzero code from gpu/ means the
 *  caller must fall back to the stock matcher.
 */
#ifndef XG_ERROR_H
#define XG_ERROR_H

#include "../xapian-gpu-types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* enum xg_status (XG_OK, XG_ERR_*) and xg_last_error() are public:
 * plugin/xapian-gpu.h. */

/* Set the calling thread's last error (printf-style, one line) and return
 * `code` so callers can write `return xg_set_error(XG_ERR_IO, ...)`. */
int xg_set_error(int code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;


/* The code passed to the last xg_set_error() on this thread. */
int xg_last_error_code(void);

/* Clear the calling thread's last error. */
void xg_clear_error(void);

/* A short name for a status code ("io", "format", ...). */
const char *xg_status_name(int code);

#ifdef __cplusplus
}
#endif
#endif
