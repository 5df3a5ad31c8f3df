/** @file query_file.h
 *  @brief A query list: from --queries FILE (qid<TAB>text per line, CRLF
 *         accepted, empty lines skipped) or from the command's words.
 */
#ifndef XG_CLI_QUERY_FILE_H
#define XG_CLI_QUERY_FILE_H

#include <stdint.h>

struct xg_cli_queries {
    uint32_t n;
    char **qid, **text;
    char *buf;
};
int xg_cli_queries_load(const char *path, struct xg_cli_queries *q);
int xg_cli_queries_from_args(int argc, char **argv, struct xg_cli_queries *q);
void xg_cli_queries_free(struct xg_cli_queries *q);

#endif
