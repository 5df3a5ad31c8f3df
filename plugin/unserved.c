/** @file unserved.c
 *  @brief Reasons for stock:unsupported and their counts (unserved.h).
 */
#include "unserved.h"

#include <stdio.h>
#include <string.h>

void xg_unserved_init(struct xg_unserved *u)
{
    memset(u, 0, sizeof *u);
    pthread_mutex_init(&u->mu, NULL);
}

void xg_unserved_destroy(struct xg_unserved *u)
{
    pthread_mutex_destroy(&u->mu);
}

void xg_unserved_note(struct xg_unserved *u, const char *message)
{
    static const char prefix[] = "unsupported: ";
    char why[XG_UNSERVED_WHY];
    const char *m = message ? message : "unknown";
    if (strncmp(m, prefix, sizeof prefix - 1) == 0) m += sizeof prefix - 1;
    const char *cut = strstr(m, " inside ");
    size_t len = cut ? (size_t)(cut - m) : strlen(m);
    if (len >= sizeof why) len = sizeof why - 1;
    memcpy(why, m, len);
    why[len] = '\0';
    pthread_mutex_lock(&u->mu);
    uint32_t i = 0;
    while (i < u->n && strcmp(u->v[i].why, why) != 0) ++i;
    if (i < u->n) {
        ++u->v[i].count;
    } else if (u->n < XG_UNSERVED_MAX) {
        memcpy(u->v[u->n].why, why, len + 1);
        u->v[u->n++].count = 1;
    } else {
        ++u->other;
    }
    pthread_mutex_unlock(&u->mu);
}

void xg_unserved_format(struct xg_unserved *u, char *buf, size_t n)
{
    if (!n) return;
    buf[0] = '\0';
    pthread_mutex_lock(&u->mu);
    uint8_t done[XG_UNSERVED_MAX] = {0};
    size_t at = 0;
    for (uint32_t k = 0; k < u->n; ++k) {
        uint32_t best = u->n;
        for (uint32_t i = 0; i < u->n; ++i)
            if (!done[i] && (best == u->n || u->v[i].count > u->v[best].count))
                best = i;
        done[best] = 1;
        int w = snprintf(buf + at, n - at, "%s%llu %s", at ? "; " : "",
                         (unsigned long long)u->v[best].count,
                         u->v[best].why);
        if (w < 0 || (size_t)w >= n - at) break;
        at += (size_t)w;
    }
    if (u->other && at < n)
        snprintf(buf + at, n - at, "%s%llu other", at ? "; " : "",
                 (unsigned long long)u->other);
    pthread_mutex_unlock(&u->mu);
}
