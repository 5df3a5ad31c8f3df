/* A C program searching through xapian-gpu: open a context once, search
 * many times (from any number of threads), read the routes, close.
 * Build: cc search.c $(pkg-config --cflags --libs xapian-gpu)
 * usage: search DB QUERY */
#include <stdio.h>

#include <xapian-gpu.h>

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: search DB QUERY\n");
        return 2;
    }
    const char *paths[] = {argv[1]};
    xg_context *ctx;
    /* NULL options: XG_CONTEXT_DEFAULTS (GPU when usable, else stock). */
    if (xg_context_open(paths, 1, NULL, NULL, &ctx) != XG_OK) {
        fprintf(stderr, "search: %s\n", xg_last_error());
        return 1;
    }
    struct xg_search_opts o = XG_SEARCH_DEFAULTS; /* OR, english stemming */
    struct xg_result r;
    int route;
    if (xg_context_search(ctx, argv[2], &o, 0, 10, &r, &route) != XG_OK) {
        fprintf(stderr, "search: %s\n", xg_last_error());
        xg_context_close(ctx);
        return 1;
    }
    printf("about %llu matches (answered by %s)\n",
           (unsigned long long)r.matches_estimated, xg_route_name(route));
    for (uint32_t i = 0; i < r.n_hits; ++i)
        printf("%u\t%.17g\n", r.hits[i].docid, r.hits[i].weight);
    xg_result_free(&r);
    xg_context_close(ctx);
    return 0;
}
