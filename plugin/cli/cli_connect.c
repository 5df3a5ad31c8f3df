/** @file cli_connect.c
 *  @brief xapian-gpu connect: stdin and stdout bridged to the Unix socket
 *         of `xapian-gpu serve`, for stub files holding
 *         `remote :xapian-gpu connect SOCKET` (docs/server.md).
 *
 *  When stdin and stdout are one socket (as a Xapian client runs the
 *  program of a stub's line), connect relays the server's greeting, hands
 *  that socket to the server (serve/fd_pass.h) and exits: the client and
 *  the server then talk directly.  Otherwise bytes are copied both ways as
 *  they come (the server parses the frames); end of stdin half-closes the
 *  socket, and the server closing the socket ends the command, exit
 *  status 0.
 */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "../serve/fd_pass.h"
#include "../serve/wire.h"
#include "cli.h"

static const char help[] =
    "usage: xapian-gpu connect SOCKET\n"
    "Copy stdin to the Unix socket of 'xapian-gpu serve --unix SOCKET' and\n"
    "the socket to stdout: the program of a stub file's line\n"
    "'remote :xapian-gpu connect SOCKET'.\n";

/* Write all n bytes; 0, or -1 (errno). */
static int put(int fd, const char *p, size_t n, int sock)
{
    while (n) {
        ssize_t w = sock ? send(fd, p, n, MSG_NOSIGNAL) : write(fd, p, n);
        if (w < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* 1 when stdin and stdout are the same socket. */
static int one_socket(void)
{
    struct stat in, out;
    return !fstat(0, &in) && !fstat(1, &out) && S_ISSOCK(in.st_mode) &&
           in.st_dev == out.st_dev && in.st_ino == out.st_ino;
}

/* Relay the server's first frame (its greeting) to stdout, then hand stdin's
 * socket over.  0 when handed over (or when either side has gone: done);
 * 1 when the bridge must take over, with *got bytes of buf still to
 * relay. */
static int hand_over(int fd, char *buf, size_t cap, size_t *got)
{
    *got = 0;
    for (;;) {
        if (*got == cap) return 1;
        ssize_t n = read(fd, buf + *got, cap - *got);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return 0;               /* the server closed */
        *got += (size_t)n;
        struct xg_wire_frame f;
        int rc = xg_wire_parse_header((const unsigned char *)buf, *got, cap,
                                      &f);
        if (rc == XG_WIRE_NEED_MORE) continue;
        if (rc != XG_WIRE_OK) return 1;
        if (*got < f.header + f.payload) continue;
        if (*got > f.header + f.payload) return 1;  /* more than a greeting */
        if (put(1, buf, *got, 0)) return 0;         /* the client has gone */
        *got = 0;
        return xg_fd_pass_send(fd, 0) ? 1 : 0;
    }
}

int xg_cli_connect(int argc, char **argv)
{
    int c, status;
    optind = 1;
    while ((c = xg_cli_getopt("connect", help, argc, argv, "", NULL, &status)) != -1)
        return status;              /* --help, --version, bad usage */
    if (optind >= argc) return xg_cli_usage("connect", "no socket given");
    if (argc - optind > 1)
        return xg_cli_usage("connect", "one socket only, got '%s' too",
                            argv[optind + 1]);
    const char *path = argv[optind];
    struct sockaddr_un sa;
    memset(&sa, 0, sizeof sa);
    sa.sun_family = AF_UNIX;
    if (strlen(path) >= sizeof sa.sun_path) {
        fprintf(stderr, "xapian-gpu connect: %s: socket path too long\n", path);
        return 1;
    }
    strcpy(sa.sun_path, path);
    signal(SIGPIPE, SIG_IGN);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof sa)) {
        fprintf(stderr, "xapian-gpu connect: %s: %s\n", path, strerror(errno));
        return 1;
    }
    char buf[65536];
    size_t held = 0;
    if (one_socket() &&
        (!hand_over(fd, buf, sizeof buf, &held) ||
         (held && put(1, buf, held, 0)))) {
        close(fd);
        return 0;
    }
    int in_open = 1;
    for (;;) {
        struct pollfd pf[2] = {{fd, POLLIN, 0}, {0, POLLIN, 0}};
        if (poll(pf, in_open ? 2 : 1, -1) < 0) {
            if (errno == EINTR) continue;
            break;
        }
        if (pf[0].revents) {
            ssize_t n = read(fd, buf, sizeof buf);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) break;      /* the server closed: done */
            if (put(1, buf, (size_t)n, 0)) break;   /* our reader is gone */
        }
        if (in_open && pf[1].revents) {
            ssize_t n = read(0, buf, sizeof buf);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) {
                shutdown(fd, SHUT_WR);
                in_open = 0;
            } else if (put(fd, buf, (size_t)n, 1)) {
                fprintf(stderr, "xapian-gpu connect: %s: %s\n", path,
                        strerror(errno));
                close(fd);
                return 1;
            }
        }
    }
    close(fd);
    return 0;
}
