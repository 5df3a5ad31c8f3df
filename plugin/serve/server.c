/** @file server.c
 *  @brief `xapian-gpu serve`'s listening sockets, accept loop, connection
 *         threads and graceful stop (server.h).
 */
#include "server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "../context.h"
#include "children.h"
#include "engines.h"


static int sig_pipe[2] = {-1, -1};

static void on_signal(int sig)
{
    int e = errno;
    unsigned char b = (unsigned char)sig;
    if (write(sig_pipe[1], &b, 1) < 0) {
        /* the pipe is full: a stop is already pending */
    }
    errno = e;
}

/* Connections alive, and the condition the stop waits on. */
static pthread_mutex_t conn_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t conn_cv = PTHREAD_COND_INITIALIZER;
static unsigned conn_alive;

static void *conn_thread(void *arg)
{
    xg_serve_relay(arg);
    pthread_mutex_lock(&conn_mu);
    --conn_alive;
    pthread_cond_broadcast(&conn_cv);
    pthread_mutex_unlock(&conn_mu);
    return NULL;
}

static int listen_tcp(const struct xg_serve_opts *o, int *fds, int *nfds,
                      char *where, size_t size)
{
    struct addrinfo hints, *res, *ai;
    char port[16];
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    snprintf(port, sizeof port, "%d", o->port);
    int rc = getaddrinfo(o->host, port, &hints, &res);
    if (rc) {
        xg_serve_log("%s: %s", o->host ? o->host : "*", gai_strerror(rc));
        return -1;
    }
    /* The first address that binds (as xapian-tcpsrv binds one). */
    int fd = -1, err = 0;
    for (ai = res; ai; ai = ai->ai_next) {
        fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK,
                    ai->ai_protocol);
        if (fd < 0) {
            err = errno;
            continue;
        }
        int one = 1;
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (ai->ai_family == AF_INET6 && !o->host) {
            int zero = 0;   /* "every address": IPv4 too */
            setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero);
        }
        if (!bind(fd, ai->ai_addr, ai->ai_addrlen) && !listen(fd, SOMAXCONN))
            break;
        err = errno;
        close(fd);
        fd = -1;
    }
    freeaddrinfo(res);
    if (fd < 0) {
        xg_serve_log("cannot listen on %s port %d: %s", o->host ? o->host : "*",
                     o->port, strerror(err));
        return -1;
    }
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    char host[INET6_ADDRSTRLEN] = "?";
    int bound = o->port;
    if (!getsockname(fd, (struct sockaddr *)&ss, &sl)) {
        if (ss.ss_family == AF_INET) {
            struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
            inet_ntop(AF_INET, &s4->sin_addr, host, sizeof host);
            bound = ntohs(s4->sin_port);
        } else if (ss.ss_family == AF_INET6) {
            struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
            inet_ntop(AF_INET6, &s6->sin6_addr, host, sizeof host);
            bound = ntohs(s6->sin6_port);
        }
    }
    snprintf(where, size, "tcp %s port %d", host, bound);
    fds[(*nfds)++] = fd;
    return 0;
}

static int listen_unix(const char *path, int *fds, int *nfds)
{
    struct sockaddr_un sa;
    memset(&sa, 0, sizeof sa);
    sa.sun_family = AF_UNIX;
    if (strlen(path) >= sizeof sa.sun_path) {
        xg_serve_log("%s: socket path too long (at most %zu bytes)", path,
                     sizeof sa.sun_path - 1);
        return -1;
    }
    strcpy(sa.sun_path, path);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) {
        xg_serve_log("%s: %s", path, strerror(errno));
        return -1;
    }
    /* A socket left by a server that is gone is replaced; a live one, or
     * anything that is not a socket, is refused. */
    struct stat st;
    if (!lstat(path, &st)) {
        if (!S_ISSOCK(st.st_mode)) {
            xg_serve_log("%s: exists and is not a socket", path);
            close(fd);
            return -1;
        }
        int probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        int live = probe >= 0 && !connect(probe, (struct sockaddr *)&sa, sizeof sa);
        if (probe >= 0) close(probe);
        if (live) {
            xg_serve_log("%s: another server is listening there", path);
            close(fd);
            return -1;
        }
        unlink(path);
    }
    if (bind(fd, (struct sockaddr *)&sa, sizeof sa) || listen(fd, SOMAXCONN)) {
        xg_serve_log("cannot listen on %s: %s", path, strerror(errno));
        close(fd);
        return -1;
    }
    fds[(*nfds)++] = fd;
    return 0;
}

/* fds 0, 1 and 2 open (on /dev/null when not), so that no socket or pipe
 * of ours takes their numbers. */
static void std_fds_open(void)
{
    for (int fd = 0; fd < 3; ++fd)
        if (fcntl(fd, F_GETFD) < 0 && errno == EBADF) {
            int n = open("/dev/null", O_RDWR);
            if (n >= 0 && n != fd) {
                dup2(n, fd);
                close(n);
            }
        }
}

/* Who answers the searches, for the ready line. */
static const char *engine_line(const struct xg_serve_opts *o, xg_context *ctx)
{
    static char line[400];
    if (!ctx) return "xapian-progsrv (--engine xapian)";
    const char *e = o->engine == XG_ENGINE_GPU ? "gpu"
                    : o->engine == XG_ENGINE_CPU ? "cpu" : "auto";
    if (!xg_context_index(ctx))
        snprintf(line, sizeof line, "xapian-progsrv: no usable index (%.300s)",
                 xg_context_index_error(ctx));
    else
        snprintf(line, sizeof line, "engine %s, xapian-progsrv for the rest", e);
    return line;
}

int xg_serve_run(const struct xg_serve_opts *o)
{
    int fds[2], nfds = 0, unix_at = -1, stop[2] = {-1, -1};
    char where[160] = "";
    std_fds_open();
    signal(SIGPIPE, SIG_IGN);
    if (pipe2(sig_pipe, O_CLOEXEC | O_NONBLOCK) || pipe2(stop, O_CLOEXEC)) {
        xg_serve_log("pipe: %s", strerror(errno));
        return 1;
    }
    if (o->port >= 0 && listen_tcp(o, fds, &nfds, where, sizeof where))
        return 1;
    if (o->unix_path) {
        if (listen_unix(o->unix_path, fds, &nfds)) {
            if (nfds) close(fds[0]);
            return 1;
        }
        unix_at = nfds - 1;
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);

    struct xg_serve_shared sh = {o, stop[0], NULL, NULL};
    if ((o->engine != XG_ENGINE_XAPIAN &&
         xg_serve_engines_open(o, &sh.engines)) ||
        xg_serve_children_open(o, &sh.children)) {
        xg_serve_engines_close(sh.engines);
        for (int i = 0; i < nfds; ++i) close(fds[i]);
        if (o->unix_path) unlink(o->unix_path);
        return 1;
    }
    pthread_attr_t at;
    pthread_attr_init(&at);
    pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
    /* Room for a search's Xapian and matcher frames. */
    pthread_attr_setstacksize(&at, 1024 * 1024);

    xg_serve_log("ready: %s%s%s%s, %d database%s, searches: %s", where,
                 *where && o->unix_path ? ", " : "",
                 o->unix_path ? "unix " : "", o->unix_path ? o->unix_path : "",
                 o->ndb, o->ndb == 1 ? "" : "s",
                 engine_line(o, xg_serve_engines_current(sh.engines)));
    unsigned long next_id = 0;
    int sig = 0;
    while (!sig) {
        struct pollfd pf[3];
        for (int i = 0; i < nfds; ++i) pf[i] = (struct pollfd){fds[i], POLLIN, 0};
        pf[nfds] = (struct pollfd){sig_pipe[0], POLLIN, 0};
        if (poll(pf, (nfds_t)nfds + 1, -1) < 0) {
            if (errno == EINTR) continue;
            xg_serve_log("poll: %s", strerror(errno));
            break;
        }
        if (pf[nfds].revents) {
            unsigned char b;
            if (read(sig_pipe[0], &b, 1) == 1) sig = b;
            break;
        }
        for (int i = 0; i < nfds; ++i) {
            if (!pf[i].revents) continue;
            for (;;) {  /* a burst: accept all that wait */
                struct sockaddr_storage ss;
                socklen_t sl = sizeof ss;
                int fd = accept4(fds[i], (struct sockaddr *)&ss, &sl, SOCK_CLOEXEC);
                if (fd < 0) {
                    if (errno == EINTR || errno == ECONNABORTED) continue;
                    if (errno != EAGAIN && errno != EWOULDBLOCK)
                        xg_serve_log("accept: %s", strerror(errno));
                    break;
                }
                struct xg_serve_conn *c = calloc(1, sizeof *c);
                if (!c) {
                    close(fd);
                    xg_serve_log("out of memory: connection refused");
                    continue;
                }
                c->sh = &sh;
                c->fd = fd;
                c->id = ++next_id;
                if (i == unix_at) {
                    c->unix_conn = 1;
                    snprintf(c->peer, sizeof c->peer, "unix");
                } else {
                    /* As Xapian's own sockets: each reply frame goes out
                     * at once, not held back by Nagle's algorithm. */
                    int one = 1;
                    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
                    char h[NI_MAXHOST], p[NI_MAXSERV];
                    if (getnameinfo((struct sockaddr *)&ss, sl, h, sizeof h, p,
                                    sizeof p, NI_NUMERICHOST | NI_NUMERICSERV))
                        snprintf(c->peer, sizeof c->peer, "tcp");
                    else
                        snprintf(c->peer, sizeof c->peer, "%.60s:%.10s", h, p);
                }
                pthread_mutex_lock(&conn_mu);
                int full = o->max_conn && conn_alive >= o->max_conn;
                if (!full) ++conn_alive;
                pthread_mutex_unlock(&conn_mu);
                if (full) {
                    xg_serve_log("connection %lu (%s): refused: %u connections "
                                 "already (--max-connections)", c->id, c->peer,
                                 o->max_conn);
                    close(fd);
                    free(c);
                    continue;
                }
                pthread_t t;
                int rc = pthread_create(&t, &at, conn_thread, c);
                if (rc) {
                    xg_serve_log("connection %lu (%s): refused: cannot start a "
                                 "thread: %s", c->id, c->peer, strerror(rc));
                    close(fd);
                    free(c);
                    pthread_mutex_lock(&conn_mu);
                    --conn_alive;
                    pthread_mutex_unlock(&conn_mu);
                }
            }
        }
    }
    /* The stop: no new connections; each connection finishes its requests
     * in flight (at most o->drain seconds), closes and reaps its child. */
    for (int i = 0; i < nfds; ++i) close(fds[i]);
    if (o->unix_path) unlink(o->unix_path);
    pthread_mutex_lock(&conn_mu);
    unsigned left = conn_alive;
    pthread_mutex_unlock(&conn_mu);
    xg_serve_log("stopping on signal %d: %u connection%s to finish", sig, left,
                 left == 1 ? "" : "s");
    if (write(stop[1], "x", 1) != 1) xg_serve_log("stop pipe: %s", strerror(errno));
    pthread_mutex_lock(&conn_mu);
    while (conn_alive) pthread_cond_wait(&conn_cv, &conn_mu);
    pthread_mutex_unlock(&conn_mu);
    pthread_attr_destroy(&at);
    unsigned long taken, stale;
    xg_serve_children_counts(sh.children, &taken, &stale);
    if (sh.children)
        xg_serve_log("spare children: %lu connections took one; %lu "
                     "replaced (a commit since they started, or dead)",
                     taken, stale);
    xg_serve_children_close(sh.children);
    xg_serve_engines_close(sh.engines);
    xg_serve_log("stopped");
    return sig ? 0 : 1;
}
