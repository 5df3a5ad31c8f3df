/** @file server_child.c
 *  @brief The server `ab` and `bench` start themselves (server_child.h).
 */
#include "server_child.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* How long the server may take to load its index (onto the GPU). */
#define START_SECONDS 300

static void cleanup(struct xg_server_child *c)
{
    unlink(c->stub);
    unlink(c->sock);
    rmdir(c->dir);
}

/* Whether something accepts connections on path. */
static int accepting(const char *path)
{
    struct sockaddr_un a;
    memset(&a, 0, sizeof a);
    a.sun_family = AF_UNIX;
    snprintf(a.sun_path, sizeof a.sun_path, "%s", path);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return 0;
    int ok = connect(fd, (struct sockaddr *)&a, sizeof a) == 0;
    close(fd);
    return ok;
}

int xg_server_child_start(const char *const *dbs, uint32_t n_dbs,
                          struct xg_server_child *c)
{
    memset(c, 0, sizeof *c);
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) {
        fprintf(stderr, "xapian-gpu: /proc/self/exe: %s\n", strerror(errno));
        return 1;
    }
    exe[n] = '\0';
    if (strpbrk(exe, " \t\n")) {
        /* A stub's program line splits at blanks. */
        fprintf(stderr, "xapian-gpu: %s: a blank in the path; start the "
                "server yourself and give --server\n", exe);
        return 1;
    }
    snprintf(c->dir, sizeof c->dir, "/tmp/xapian-gpu-ab-XXXXXX");
    if (!mkdtemp(c->dir)) {
        fprintf(stderr, "xapian-gpu: %s: %s\n", c->dir, strerror(errno));
        return 1;
    }
    snprintf(c->sock, sizeof c->sock, "%s/serve.sock", c->dir);
    snprintf(c->stub, sizeof c->stub, "%s/serve.stub", c->dir);
    FILE *f = fopen(c->stub, "w");
    if (!f || fprintf(f, "remote :%s connect %s\n", exe, c->sock) < 0 ||
        fclose(f) != 0) {
        fprintf(stderr, "xapian-gpu: %s: %s\n", c->stub, strerror(errno));
        cleanup(c);
        return 1;
    }
    const char **argv = calloc(n_dbs + 8, sizeof *argv);
    if (!argv) {
        fprintf(stderr, "xapian-gpu: out of memory\n");
        cleanup(c);
        return 1;
    }
    int k = 0;
    argv[k++] = "xapian-gpu";
    argv[k++] = "serve";
    argv[k++] = "--engine";
    argv[k++] = "auto";
    argv[k++] = "--unix";
    argv[k++] = c->sock;
    for (uint32_t i = 0; i < n_dbs; ++i) argv[k++] = dbs[i];
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        execv(exe, (char *const *)argv);
        fprintf(stderr, "xapian-gpu: %s: %s\n", exe, strerror(errno));
        _exit(127);
    }
    free(argv);
    if (pid < 0) {
        fprintf(stderr, "xapian-gpu: fork: %s\n", strerror(errno));
        cleanup(c);
        return 1;
    }
    c->pid = pid;
    const time_t until = time(NULL) + START_SECONDS;
    while (!accepting(c->sock)) {
        int status;
        if (waitpid(pid, &status, WNOHANG) == pid) {
            fprintf(stderr, "xapian-gpu: the server it started exited "
                    "(status %d) before accepting connections\n",
                    WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
            c->pid = 0;
            cleanup(c);
            return 1;
        }
        if (time(NULL) > until) {
            fprintf(stderr, "xapian-gpu: the server it started did not accept "
                    "connections within %d s\n", START_SECONDS);
            xg_server_child_stop(c);
            return 1;
        }
        struct timespec ts = {0, 20 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    return 0;
}

int xg_server_child_stop(struct xg_server_child *c)
{
    int status = 0;
    if (c->pid > 0) {
        kill(c->pid, SIGTERM);
        while (waitpid(c->pid, &status, 0) < 0 && errno == EINTR) {
        }
        c->pid = 0;
    }
    cleanup(c);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
