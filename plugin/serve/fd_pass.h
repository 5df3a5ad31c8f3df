/** @file fd_pass.h
 *  @brief `xapian-gpu connect` hands its client's socket to `serve`, so the
 *         client and the server talk directly, without a copying hop.
 *
 *  A Xapian client runs the program of a `remote :PROGRAM` stub with one
 *  socket (a socketpair) as both its stdin and stdout.  connect relays the
 *  server's greeting, then sends the byte XG_FD_PASS_BYTE with that socket
 *  attached (SCM_RIGHTS) over the Unix socket and exits; the server reads
 *  the client's messages from the passed socket from then on.  0xff is no
 *  message type, and the server switches only when a socket came with it
 *  as the connection's first byte, so a client speaking the protocol
 *  straight to the Unix socket is served as before (docs/server.md).
 */
#ifndef XG_SERVE_FD_PASS_H
#define XG_SERVE_FD_PASS_H

#define XG_FD_PASS_BYTE 0xffu

/* Send XG_FD_PASS_BYTE with fd over the Unix socket sock: 0, or -1
 * (errno). */
int xg_fd_pass_send(int sock, int fd);

/* Receive one byte from sock into *byte, and in *fd the socket that came
 * with it (-1: none; any other descriptor that came is closed).  >0: the
 * byte read, 0: end of input, -1: error (errno). */
int xg_fd_pass_recv(int sock, unsigned char *byte, int *fd);

/* O_NONBLOCK on fd (a relayed socket or a child's pipe): 0, or -1. */
int xg_fd_set_nonblock(int fd);

#endif
