/** @file fd_pass.c
 *  @brief The socket hand-over of `connect` to `serve` (fd_pass.h).
 */
#include "fd_pass.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

int xg_fd_pass_send(int sock, int fd)
{
    unsigned char b = XG_FD_PASS_BYTE;
    struct iovec iov = {&b, 1};
    union {
        struct cmsghdr h;
        char space[CMSG_SPACE(sizeof(int))];
    } u;
    memset(&u, 0, sizeof u);
    struct msghdr m = {0};
    m.msg_iov = &iov;
    m.msg_iovlen = 1;
    m.msg_control = u.space;
    m.msg_controllen = sizeof u.space;
    struct cmsghdr *c = CMSG_FIRSTHDR(&m);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(c), &fd, sizeof fd);
    for (;;) {
        ssize_t w = sendmsg(sock, &m, MSG_NOSIGNAL);
        if (w == 1) return 0;
        if (w < 0 && errno == EINTR) continue;
        return -1;
    }
}

int xg_fd_pass_recv(int sock, unsigned char *byte, int *fd)
{
    *fd = -1;
    struct iovec iov = {byte, 1};
    union {
        struct cmsghdr h;
        char space[CMSG_SPACE(4 * sizeof(int))];
    } u;
    struct msghdr m = {0};
    m.msg_iov = &iov;
    m.msg_iovlen = 1;
    m.msg_control = u.space;
    m.msg_controllen = sizeof u.space;
    ssize_t got;
    do {
        got = recvmsg(sock, &m, MSG_CMSG_CLOEXEC);
    } while (got < 0 && errno == EINTR);
    if (got <= 0) return (int)got;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c)) {
        if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
            continue;
        size_t n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        for (size_t i = 0; i < n; ++i) {
            int f;
            memcpy(&f, CMSG_DATA(c) + i * sizeof(int), sizeof f);
            struct stat st;
            if (*fd < 0 && !fstat(f, &st) && S_ISSOCK(st.st_mode))
                *fd = f;
            else
                close(f);
        }
    }
    return 1;
}

int xg_fd_set_nonblock(int fd)
{
    int fl = fcntl(fd, F_GETFL);
    return fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0 ? -1 : 0;
}
