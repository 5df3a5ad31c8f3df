/** @file server_child.h
 *  @brief The server `ab` and `bench` start for engine server when no
 *         --server stub names a running one: `xapian-gpu serve --engine
 *         auto` on the same databases, on a Unix socket in a private
 *         temporary directory, reached through a stub file
 *         "remote :xapian-gpu connect SOCKET" as an application would.
 *         Its ready line and, when it stops, its routes line go to stderr.
 */
#ifndef XG_CLI_SERVER_CHILD_H
#define XG_CLI_SERVER_CHILD_H

#include <stdint.h>
#include <sys/types.h>

struct xg_server_child {
    pid_t pid;                  /* 0: none running */
    char dir[64];               /* the private directory */
    char sock[96];
    char stub[96];              /* the stub file to open */
};

/* Start it on dbs and wait until it accepts connections (it may load an
 * index onto the GPU first).  0, or 1 with a line on stderr (nothing left
 * behind). */
int xg_server_child_start(const char *const *dbs, uint32_t n_dbs,
                          struct xg_server_child *c);

/* SIGTERM, wait for it (it drains and prints its routes), remove the
 * directory.  Its exit status (0 expected). */
int xg_server_child_stop(struct xg_server_child *c);

#endif
