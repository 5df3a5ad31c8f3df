/** @file children.c
 *  @brief serve's xapian-progsrv children: started for a connection, or
 *         taken from the spares a thread keeps started (children.h).
 *
 *  A spare records the databases' glass version files as they were just
 *  before it started, so the revision it opened is that one or a later
 *  one.  At the hand-over the files are read again: equal bytes (each
 *  holds its database's uuid and revision) mean no commit since, so the
 *  spare holds the revision a child started now would.  Otherwise every
 *  spare goes back to the thread to be reaped and the connection starts
 *  its own child, as without spares.
 */
#include "children.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fd_pass.h"

extern char **environ;

/* A glass version file is a few hundred bytes; a larger file is no
 * version file this code knows. */
#define VERSION_MAX (64u << 10)

/* The databases' version files, each as its length then its bytes. */
struct stamp {
    size_t len;
    unsigned char *b;
};

struct spare {
    struct xg_serve_child ch;
    struct stamp st;
};

struct xg_serve_children {
    const struct xg_serve_opts *o;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    pthread_t thread;
    struct spare *spares;       /* want of them at most, oldest first */
    unsigned n, want;
    struct spare *stale;        /* handed back, for the thread to reap */
    unsigned n_stale;
    int stop;
    unsigned long taken, n_replaced;
};

static int read_all(int fd, unsigned char *p, size_t n)
{
    while (n) {
        ssize_t g = read(fd, p, n);
        if (g < 0 && errno == EINTR) continue;
        if (g <= 0) return -1;
        p += g;
        n -= (size_t)g;
    }
    return 0;
}

/* The databases' version files now; -1 if one cannot be read. */
static int read_stamp(const struct xg_serve_opts *o, struct stamp *s)
{
    memset(s, 0, sizeof *s);
    for (int i = 0; i < o->ndb; ++i) {
        char path[4096];
        if (snprintf(path, sizeof path, "%s/iamglass", o->dbs[i]) >=
            (int)sizeof path)
            goto fail;
        /* The open holds one version: a commit renames a new file over
         * the name, it does not rewrite this one. */
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0) goto fail;
        struct stat st;
        size_t n = 0;
        unsigned char *b = NULL;
        if (!fstat(fd, &st) && S_ISREG(st.st_mode) && st.st_size > 0 &&
            st.st_size <= (off_t)VERSION_MAX) {
            n = (size_t)st.st_size;
            b = realloc(s->b, s->len + sizeof n + n);
        }
        if (!b || read_all(fd, b + s->len + sizeof n, n)) {
            if (b) s->b = b;
            close(fd);
            goto fail;
        }
        close(fd);
        s->b = b;
        memcpy(s->b + s->len, &n, sizeof n);
        s->len += sizeof n + n;
    }
    return 0;
fail:
    free(s->b);
    memset(s, 0, sizeof *s);
    return -1;
}

static int same_stamp(const struct stamp *a, const struct stamp *b)
{
    return a->len == b->len && !memcmp(a->b, b->b, a->len);
}

/* Start `progsrv --timeout 0 DB...` on two pipes.  The relay keeps the
 * timeouts, so the child has none of its own; it gets default signal
 * handling and its own process group (a terminal's ^C or a unit's
 * SIGTERM reaches the server, which stops its children itself). */
static int spawn(const struct xg_serve_opts *o, struct xg_serve_child *ch)
{
    memset(ch, 0, sizeof *ch);
    ch->to_child = ch->from_child = -1;
    int in[2], out[2];
    if (pipe2(in, O_CLOEXEC)) return -1;
    if (pipe2(out, O_CLOEXEC)) {
        close(in[0]);
        close(in[1]);
        return -1;
    }
    char **argv = calloc((size_t)o->ndb + 4, sizeof *argv);
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t at;
    int rc = -1, fa_ok = 0, at_ok = 0;
    if (!argv) goto out;
    argv[0] = (char *)o->progsrv;
    argv[1] = (char *)"--timeout";
    argv[2] = (char *)"0";
    for (int i = 0; i < o->ndb; ++i) argv[3 + i] = o->dbs[i];
    if (posix_spawn_file_actions_init(&fa)) goto out;
    fa_ok = 1;
    if (posix_spawnattr_init(&at)) goto out;
    at_ok = 1;
    sigset_t def, none;
    sigemptyset(&none);
    sigemptyset(&def);
    sigaddset(&def, SIGPIPE);
    sigaddset(&def, SIGTERM);
    sigaddset(&def, SIGINT);
    sigaddset(&def, SIGHUP);
    /* fds 0..2 are always open in the server (server.c), so the pipes are
     * never 0 or 1 themselves and dup2 clears their close-on-exec. */
    if (posix_spawn_file_actions_adddup2(&fa, in[0], 0) ||
        posix_spawn_file_actions_adddup2(&fa, out[1], 1) ||
        posix_spawnattr_setsigdefault(&at, &def) ||
        posix_spawnattr_setsigmask(&at, &none) ||
        posix_spawnattr_setpgroup(&at, 0) ||
        posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGDEF |
                                          POSIX_SPAWN_SETSIGMASK |
                                          POSIX_SPAWN_SETPGROUP))
        goto out;
    rc = posix_spawnp(&ch->pid, o->progsrv, &fa, &at, argv, environ);
    if (rc) {
        ch->pid = 0;
        errno = rc;
        rc = -1;
    }
out:
    if (fa_ok) posix_spawn_file_actions_destroy(&fa);
    if (at_ok) posix_spawnattr_destroy(&at);
    free(argv);
    close(in[0]);
    close(out[1]);
    ch->to_child = in[1];
    ch->from_child = out[0];
    if (!rc && (xg_fd_set_nonblock(ch->to_child) ||
                xg_fd_set_nonblock(ch->from_child)))
        rc = -1;
    if (rc) {
        int e = errno;
        xg_serve_child_reap(ch);
        errno = e;
        return -1;
    }
    return 0;
}

int xg_serve_child_reap(struct xg_serve_child *ch)
{
    int st = 0;
    if (ch->to_child >= 0) close(ch->to_child);
    ch->to_child = -1;
    if (ch->from_child >= 0) close(ch->from_child);
    ch->from_child = -1;
    if (ch->pid <= 0) return 0;
    for (int i = 0; i < 100; ++i) {     /* up to 2 s */
        pid_t p = waitpid(ch->pid, &st, WNOHANG);
        if (p == ch->pid || (p < 0 && errno != EINTR)) {
            ch->pid = 0;
            return st;
        }
        struct timespec ts = {0, 20 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    kill(ch->pid, SIGKILL);
    while (waitpid(ch->pid, &st, 0) < 0 && errno == EINTR) {
    }
    ch->pid = 0;
    return st;
}

static void drop(struct spare *sp)
{
    xg_serve_child_reap(&sp->ch);
    free(sp->st.b);
    memset(sp, 0, sizeof *sp);
}

/* The thread: reap what came back, then start spares up to `want`; after
 * a failed start, wait a second before the next. */
static void *keeper(void *arg)
{
    struct xg_serve_children *c = arg;
    pthread_mutex_lock(&c->mu);
    while (!c->stop) {
        if (c->n_stale) {
            struct spare sp = c->stale[--c->n_stale];
            pthread_mutex_unlock(&c->mu);
            drop(&sp);
            pthread_mutex_lock(&c->mu);
            continue;
        }
        if (c->n < c->want) {
            pthread_mutex_unlock(&c->mu);
            struct spare sp;
            memset(&sp, 0, sizeof sp);
            /* The stamp first: the spare opens this revision or a later
             * one, never an earlier one. */
            int ok = !read_stamp(c->o, &sp.st) && !spawn(c->o, &sp.ch);
            if (!ok) free(sp.st.b);
            pthread_mutex_lock(&c->mu);
            if (ok && !c->stop) {
                c->spares[c->n++] = sp;
            } else if (ok) {
                c->stale[c->n_stale++] = sp;
            } else {
                struct timespec until;
                clock_gettime(CLOCK_REALTIME, &until);
                until.tv_sec += 1;
                pthread_cond_timedwait(&c->cv, &c->mu, &until);
            }
            continue;
        }
        pthread_cond_wait(&c->cv, &c->mu);
    }
    pthread_mutex_unlock(&c->mu);
    return NULL;
}

int xg_serve_children_open(const struct xg_serve_opts *o,
                           struct xg_serve_children **out)
{
    *out = NULL;
    struct stamp probe;
    if (o->spare_children <= 0 || read_stamp(o, &probe)) return 0;
    free(probe.b);
    struct xg_serve_children *c = calloc(1, sizeof *c);
    const unsigned want = (unsigned)o->spare_children;
    if (c) {
        c->spares = calloc(want, sizeof *c->spares);
        c->stale = calloc(want + 1, sizeof *c->stale);
    }
    if (!c || !c->spares || !c->stale) {
        if (c) {
            free(c->spares);
            free(c->stale);
        }
        free(c);
        xg_serve_log("out of memory: no spare children");
        return 0;
    }
    c->o = o;
    c->want = want;
    pthread_mutex_init(&c->mu, NULL);
    pthread_cond_init(&c->cv, NULL);
    int rc = pthread_create(&c->thread, NULL, keeper, c);
    if (rc) {
        xg_serve_log("cannot start the spare children's thread: %s",
                     strerror(rc));
        pthread_mutex_destroy(&c->mu);
        pthread_cond_destroy(&c->cv);
        free(c->spares);
        free(c->stale);
        free(c);
        return -1;
    }
    *out = c;
    return 0;
}

void xg_serve_children_close(struct xg_serve_children *c)
{
    if (!c) return;
    pthread_mutex_lock(&c->mu);
    c->stop = 1;
    pthread_cond_broadcast(&c->cv);
    pthread_mutex_unlock(&c->mu);
    pthread_join(c->thread, NULL);
    while (c->n) drop(&c->spares[--c->n]);
    while (c->n_stale) drop(&c->stale[--c->n_stale]);
    pthread_mutex_destroy(&c->mu);
    pthread_cond_destroy(&c->cv);
    free(c->spares);
    free(c->stale);
    free(c);
}

int xg_serve_child_get(struct xg_serve_children *c,
                       const struct xg_serve_opts *o,
                       struct xg_serve_child *out)
{
    struct stamp now;
    if (c && !read_stamp(o, &now)) {
        pthread_mutex_lock(&c->mu);
        while (c->n) {
            /* The oldest first: the likeliest to have finished starting
             * (its greeting waiting in the pipe). */
            struct spare sp = c->spares[0];
            memmove(c->spares, c->spares + 1, --c->n * sizeof *c->spares);
            int st;
            const pid_t p = waitpid(sp.ch.pid, &st, WNOHANG);
            if (p == sp.ch.pid) sp.ch.pid = 0;  /* it died: reaped */
            if (p == 0 && same_stamp(&sp.st, &now)) {
                ++c->taken;
                pthread_cond_signal(&c->cv);
                pthread_mutex_unlock(&c->mu);
                free(now.b);
                free(sp.st.b);
                *out = sp.ch;
                return 0;
            }
            /* A commit since it started, or it died: the thread reaps
             * it. */
            ++c->n_replaced;
            c->stale[c->n_stale++] = sp;
        }
        pthread_cond_signal(&c->cv);
        pthread_mutex_unlock(&c->mu);
        free(now.b);
    }
    return spawn(o, out);
}

void xg_serve_children_counts(const struct xg_serve_children *c,
                              unsigned long *taken, unsigned long *stale)
{
    *taken = *stale = 0;
    if (!c) return;
    struct xg_serve_children *m = (struct xg_serve_children *)c;
    pthread_mutex_lock(&m->mu);
    *taken = m->taken;
    *stale = m->n_replaced;
    pthread_mutex_unlock(&m->mu);
}
