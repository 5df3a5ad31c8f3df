/** @file cli_connect.c
 *  @brief xapian-gpu connect: stdin and stdout bridged to the Unix socket
 *         of `xapian-gpu serve`, for stub files holding
 *         `remote :xapian-gpu connect SOCKET` (docs/server.md).
 *
 *  Bytes are copied both ways as they come (the server parses the frames).
 *  End of stdin half-closes the socket; the server closing the socket ends
 *  the command, exit status 0.
 */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

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
