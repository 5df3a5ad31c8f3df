/** @file export.c
 *  @brief xapian-gpu export: stream a Xapian database into the GPU index.
 *
 *  One pass: doc lengths once from the all-documents lists (the dense
 *  renumbering), then every term's postings (docid + wdf, and positions
 *  unless left out, through xg_shim_db_each_term) encoded into PForDelta
 *  blocks with their skip entries, Bloom filter, regression, hash
 *  segments and per-block positions (gpu/index/positions.h).  Sections grow in
 *  memory and are written at the end to a temporary file that is fsync'd
 *  and renamed over the destination, so a failed export leaves nothing.
 */
#include "xg_export.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../gpu/bm25.h"
#include "../gpu/runtime/buf.h"
#include "../gpu/runtime/knobs.h"
#include "../gpu/runtime/outfile.h"
#include "../gpu/index/crc32c.h"
#include "../gpu/index/termdict.h"
#include "../gpu/runtime/error.h"
#include "../gpu/index/format.h"
#include "../gpu/index/impact.h"
#include "../gpu/index/list_encode.h"
#include "xg_config.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

struct exporter {
    const struct xg_export_opts *o;
    struct xg_buf sec[XG_SEC_COUNT];
    struct xg_buf terms_lr;            /* appended to TERMS at the end */
    struct xg_buf impact_codes;        /* appended to IMPACTS at the end */
    struct xg_buf pos_data;            /* appended to POSITIONS (the block
                                          offsets) at the end */
    int positions;                     /* writing POSITIONS */
    double *kd;                        /* dense -> K_d (impacts only) */
    struct xg_dict_writer dict;
    uint32_t n_shards;
    uint64_t n_docs;
    uint32_t *docids;                  /* dense -> Xapian docid */
    uint32_t *doclens;                 /* dense -> length */
    uint32_t *dense_map;               /* docid -> dense+1, if small enough */
    uint32_t map_size;
    uint32_t *dense;                   /* one term's dense numbers */
    struct xg_bm25_query bm25;
    uint64_t n_postings, n_blocks, n_terms, n_terms_hint;
    double in_callback, encoding, t0, last_draw;
    int rc;
    char err[512];                     /* the failing thread's message */
};

/* Dense number of a live docid, or -1. */
static int64_t dense_of(const struct exporter *x, uint32_t d)
{
    if (x->dense_map) {
        uint32_t m = d < x->map_size ? x->dense_map[d] : 0;
        return (int64_t)m - 1;
    }
    uint64_t lo = 0, hi = x->n_docs;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (x->docids[mid] < d) lo = mid + 1; else hi = mid;
    }
    return lo < x->n_docs && x->docids[lo] == d ? (int64_t)lo : -1;
}

/* Dense numbers of one term's (ascending) docids. */
static int map_dense(struct exporter *x, const uint32_t *docids, uint32_t n)
{
    if (x->dense_map) {
        for (uint32_t i = 0; i < n; ++i) {
            const int64_t m = dense_of(x, docids[i]);
            if (m < 0) goto not_live;
            x->dense[i] = (uint32_t)m;
        }
        return XG_OK;
    }
    /* Sparse docid space: gallop forward through the sorted docid array. */
    uint64_t j = 0;
    for (uint32_t i = 0; i < n; ++i) {
        uint32_t d = docids[i];
        uint64_t step = 1, hi = j;
        while (hi < x->n_docs && x->docids[hi] < d) {
            j = hi + 1;
            hi += step;
            step *= 2;
        }
        if (hi > x->n_docs) hi = x->n_docs;
        while (j < hi) { /* binary search in [j, hi] */
            uint64_t mid = j + (hi - j) / 2;
            if (x->docids[mid] < d) j = mid + 1; else hi = mid;
        }
        if (j >= x->n_docs || x->docids[j] != d) goto not_live;
        x->dense[i] = (uint32_t)j;
    }
    return XG_OK;
not_live:
    return xg_set_error(XG_ERR_FORMAT, "database has a posting for a docid "
                        "that is not a live document (changed during "
                        "export?)");
}

static void draw_progress(struct exporter *x, int final)
{
    double t = now();
    if (!final && t - x->last_draw < 0.2) return;
    x->last_draw = t;
    double frac = x->n_terms_hint ? (double)x->n_terms / x->n_terms_hint : 0;
    if (frac > 1 || final) frac = 1;
    int width = 30, filled = (int)(frac * width);
    double rate = x->n_postings / ((t - x->t0) > 1e-9 ? (t - x->t0) : 1e-9);
    fprintf(stderr, "\rexport [%.*s%*s] %3.0f%%  %llu terms  %llu postings  "
            "%.1f M postings/s%s", filled,
            "==============================", width - filled, "",
            frac * 100, (unsigned long long)x->n_terms,
            (unsigned long long)x->n_postings, rate / 1e6, final ? "\n" : "");
}

/* Append v as an LEB128 varint (positions.h) at *p. */
static uint8_t *put_varint(uint8_t *p, uint32_t v)
{
    while (v >= 0x80) {
        *p++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *p++ = (uint8_t)v;
    return p;
}

/* One term's positions into POSITIONS (positions.h): per block, its
 * offset in the data area, then, unless none of its postings has a
 * position, each posting's count and its first position and gaps. */
static int encode_positions(struct exporter *x,
                            const struct xg_term_postings *tp)
{
    const uint32_t *pos = tp->positions;
    int rc;
    for (uint32_t from = 0; from < tp->n; from += XG_FMT_BLOCK) {
        const uint32_t to = tp->n - from < XG_FMT_BLOCK ? tp->n
                                                        : from + XG_FMT_BLOCK;
        const uint64_t at = x->pos_data.len;
        if ((rc = xg_buf_append(&x->sec[XG_SEC_POSITIONS], &at, sizeof at)))
            return rc;
        uint64_t m = 0;
        for (uint32_t i = from; i < to; ++i) m += tp->pos_counts[i];
        if (!m) continue;
        /* At most 5 bytes a varint. */
        if ((rc = xg_buf_reserve(&x->pos_data, 5 * ((size_t)m + to - from))))
            return rc;
        uint8_t *p = x->pos_data.data + x->pos_data.len;
        for (uint32_t i = from; i < to; ++i) {
            const uint32_t c = tp->pos_counts[i];
            p = put_varint(p, c);
            for (uint32_t k = 0; k < c; ++k) {
                if (k && pos[k] <= pos[k - 1])
                    return xg_set_error(XG_ERR_XAPIAN, "term positions not "
                                        "ascending (database changed during "
                                        "export?)");
                p = put_varint(p, k ? pos[k] - pos[k - 1] : pos[k]);
            }
            pos += c;
        }
        x->pos_data.len = (size_t)(p - x->pos_data.data);
    }
    return XG_OK;
}

/* Encode one term's list into the sections (runs on the encoder thread). */
static int encode_term(struct exporter *x, const struct xg_term_postings *tp)
{
    struct xg_buf *post = &x->sec[XG_SEC_POSTINGS];
    const uint32_t *wdfs = tp->wdfs;
    const uint32_t n = tp->n;
    int rc;
    if ((rc = map_dense(x, tp->docids, n))) return rc;
    if ((rc = xg_dict_add(&x->dict, tp->term, tp->term_len))) return rc;
    struct xg_fmt_term e;
    struct xg_fmt_term_lr lr;
    struct xg_list_params lp = {(uint32_t)x->n_docs,
                                x->o->bloom_bits_per_posting,
                                x->o->bloom_hashes, x->o->hashseg_target,
                                &x->bm25,
                                /* block upper bounds use wqf 1 */
                                xg_bm25_termweight(&x->o->bm25, x->n_docs, n, 1,
                                                   1.0),
                                x->doclens};
    struct xg_list_sink sink = {post, &x->sec[XG_SEC_SKIP],
                                &x->sec[XG_SEC_BLOOM], &x->sec[XG_SEC_HASHSEG]};
    if ((rc = xg_list_encode(x->dense, wdfs, n, &lp, &sink, &e, &lr)))
        return rc;
    x->n_blocks += (n + XG_FMT_BLOCK - 1) / XG_FMT_BLOCK;
    if ((rc = xg_buf_append(&x->sec[XG_SEC_TERMS], &e, sizeof e))) return rc;
    if ((rc = xg_buf_append(&x->terms_lr, &lr, sizeof lr))) return rc;
    if (x->kd) {
        struct xg_fmt_impact im;
        if ((rc = xg_impact_list(x->dense, wdfs, n, x->kd, &x->impact_codes,
                                 &im)) ||
            (rc = xg_buf_append(&x->sec[XG_SEC_IMPACTS], &im, sizeof im)))
            return rc;
    }
    if (x->positions && (rc = encode_positions(x, tp))) return rc;
    if ((rc = xg_buf_append(&x->sec[XG_SEC_SHARD_DF], tp->shard_df,
                            x->n_shards * 4u)))
        return rc;
    ++x->n_terms;
    x->n_postings += n;
    if (x->o->progress) draw_progress(x, 0);
    return XG_OK;
}

/* Reading Xapian and encoding overlap: the Xapian thread packs terms into
 * chunks (many terms, tens of thousands of postings, so the two threads
 * meet rarely), one encoder thread empties them in term order. */
#define RING 8
#define CHUNK_POSTINGS (1u << 16)
#define CHUNK_TERMS 4096u

/* Per term in a chunk. */
struct chunk_term {
    uint32_t len, n;            /* term bytes, postings */
    uint64_t n_positions;
};

struct chunk {
    uint32_t n_terms;
    uint64_t n_postings;
    struct xg_buf terms;        /* term bytes back to back */
    struct xg_buf meta;         /* struct chunk_term per term */
    struct xg_buf docids, wdfs, shard_df;
    struct xg_buf pos_counts, positions;    /* when positions are read */
};

struct ring {
    struct chunk c[RING];
    uint64_t head, tail;        /* published up to head, encoded to tail */
    int done, failed;
    pthread_mutex_t m;
    pthread_cond_t not_full, not_empty;
    struct exporter *x;
};

static void *encoder_main(void *arg)
{
    struct ring *r = arg;
    struct exporter *x = r->x;
    pthread_mutex_lock(&r->m);
    for (;;) {
        while (r->tail == r->head && !r->done && !r->failed)
            pthread_cond_wait(&r->not_empty, &r->m);
        if (r->tail == r->head || r->failed) break;
        struct chunk *c = &r->c[r->tail % RING];
        pthread_mutex_unlock(&r->m);
        int rc = XG_OK;
        double t_enc = now();
        const struct chunk_term *meta = (const void *)c->meta.data;
        struct xg_term_postings tp = {
            .term = (const char *)c->terms.data,
            .docids = (const uint32_t *)c->docids.data,
            .wdfs = (const uint32_t *)c->wdfs.data,
            .shard_df = (const uint32_t *)c->shard_df.data,
            .pos_counts = (const uint32_t *)c->pos_counts.data,
            .positions = (const uint32_t *)c->positions.data};
        for (uint32_t i = 0; i < c->n_terms && !rc; ++i) {
            tp.term_len = meta[i].len;
            tp.n = meta[i].n;
            tp.n_positions = meta[i].n_positions;
            rc = encode_term(x, &tp);
            tp.term += tp.term_len;
            tp.docids += tp.n;
            tp.wdfs += tp.n;
            tp.shard_df += x->n_shards;
            if (x->positions) {
                tp.pos_counts += tp.n;
                tp.positions += tp.n_positions;
            }
        }
        x->encoding += now() - t_enc;
        pthread_mutex_lock(&r->m);
        if (rc) {
            /* Keep the message: xg_last_error is per thread. */
            x->rc = rc;
            snprintf(x->err, sizeof x->err, "%s", xg_last_error());
            r->failed = 1;
            pthread_cond_signal(&r->not_full);
            break;
        }
        ++r->tail;
        pthread_cond_signal(&r->not_full);
    }
    pthread_mutex_unlock(&r->m);
    return NULL;
}

/* Hand the chunk at head to the encoder. */
static int publish(struct ring *r)
{
    pthread_mutex_lock(&r->m);
    ++r->head;
    pthread_cond_signal(&r->not_empty);
    /* Wait for room for the next chunk. */
    while (r->head - r->tail == RING && !r->failed)
        pthread_cond_wait(&r->not_full, &r->m);
    int failed = r->failed;
    pthread_mutex_unlock(&r->m);
    if (failed) return 1;
    struct chunk *c = &r->c[r->head % RING];
    c->n_terms = 0;
    c->n_postings = 0;
    c->terms.len = c->meta.len = c->docids.len = c->wdfs.len = 0;
    c->shard_df.len = c->pos_counts.len = c->positions.len = 0;
    return 0;
}

static int on_term(void *ctx, const struct xg_term_postings *tp)
{
    struct ring *r = ctx;
    double t_in = now();
    const uint32_t n = tp->n;
    if (n == 0) return 0; /* a term with no postings cannot be in a list */
    /* The chunk at head is the reader's alone until it is published. */
    struct chunk *c = &r->c[r->head % RING];
    const struct chunk_term meta = {(uint32_t)tp->term_len, n,
                                    tp->n_positions};
    int rc = xg_buf_append(&c->terms, tp->term, tp->term_len);
    if (!rc) rc = xg_buf_append(&c->meta, &meta, sizeof meta);
    if (!rc) rc = xg_buf_append(&c->docids, tp->docids, (size_t)n * 4);
    if (!rc) rc = xg_buf_append(&c->wdfs, tp->wdfs, (size_t)n * 4);
    if (!rc) rc = xg_buf_append(&c->shard_df, tp->shard_df,
                                r->x->n_shards * 4u);
    if (!rc && r->x->positions)
        rc = xg_buf_append(&c->pos_counts, tp->pos_counts, (size_t)n * 4);
    if (!rc && r->x->positions)
        rc = xg_buf_append(&c->positions, tp->positions,
                           (size_t)tp->n_positions * 4);
    if (rc) {
        pthread_mutex_lock(&r->m);
        r->x->rc = rc;
        snprintf(r->x->err, sizeof r->x->err, "%s", xg_last_error());
        r->failed = 1;
        pthread_cond_signal(&r->not_empty);
        pthread_mutex_unlock(&r->m);
        return 1;
    }
    ++c->n_terms;
    c->n_postings += n;
    int stop = 0;
    if (c->n_postings >= CHUNK_POSTINGS || c->n_terms >= CHUNK_TERMS)
        stop = publish(r);
    r->x->in_callback += now() - t_in;
    return stop;
}

/* Lay out, checksum and atomically write the file. */
static int write_index(struct exporter *x, xg_db *db, const char *out_path,
                       const struct xg_db_stats *st,
                       struct xg_export_report *rep)
{
    int rc;
    size_t tables = XG_FMT_TABLES_END(x->n_shards);
    uint8_t *head = calloc(1, tables);
    struct xg_outfile out = {0};
    if (!head) {
        rc = xg_set_error(XG_ERR_NOMEM, "%s: out of memory", out_path);
        goto done;
    }
    struct xg_fmt_header *h = (struct xg_fmt_header *)head;
    struct xg_fmt_shard *sh = (struct xg_fmt_shard *)(head + XG_FMT_SHARDS_OFFSET);
    struct xg_fmt_section *sec =
        (struct xg_fmt_section *)(head + XG_FMT_SECTIONS_OFFSET(x->n_shards));
    memcpy(h->magic, XG_FMT_MAGIC, 8);
    h->version = XG_FMT_VERSION;
    h->endian_tag = XG_FMT_ENDIAN_TAG;
    h->flags = XG_FMT_FLAG_BLOCK_UB | (x->kd ? XG_FMT_FLAG_IMPACTS : 0) |
               (x->positions ? XG_FMT_FLAG_POSITIONS : 0) |
               (x->o->values ? XG_FMT_FLAG_VALUES : 0);
    h->n_shards = x->n_shards;
    h->n_sections = XG_SEC_COUNT;
    h->n_docs = x->n_docs;
    h->total_length = st->total_length;
    h->last_docid = st->last_docid;
    h->doclen_min = UINT32_MAX;
    for (uint64_t i = 0; i < x->n_docs; ++i) {
        if (x->doclens[i] < h->doclen_min) h->doclen_min = x->doclens[i];
        if (x->doclens[i] > h->doclen_max) h->doclen_max = x->doclens[i];
    }
    if (!x->n_docs) h->doclen_min = 0;
    h->block_size = XG_FMT_BLOCK;
    h->n_terms = x->n_terms;
    h->n_postings = x->n_postings;
    h->n_blocks = x->n_blocks;
    h->bloom_bits_per_posting = x->o->bloom_bits_per_posting;
    h->bloom_hashes = x->o->bloom_hashes;
    h->hashseg_target = x->o->hashseg_target;
    h->bm25_k1 = x->o->bm25.k1;
    h->bm25_b = x->o->bm25.b;
    h->bm25_min_normlen = x->o->bm25.min_normlen;
    h->created_unix = (uint64_t)time(NULL);
    snprintf(h->creator, sizeof h->creator, "xapian-gpu %s", XG_VERSION);
    for (uint32_t i = 0; i < x->n_shards; ++i) {
        struct xg_shard_info si;
        if ((rc = xg_shim_db_shard(db, i, &si))) goto done;
        memcpy(sh[i].uuid, si.uuid, strnlen(si.uuid, XG_FMT_UUID_LEN - 1));
        sh[i].revision = si.revision;
        sh[i].doccount = si.doccount;
        sh[i].last_docid = si.last_docid;
    }
    uint64_t off = (tables + XG_FMT_ALIGN - 1) / XG_FMT_ALIGN * XG_FMT_ALIGN;
    for (unsigned i = 0; i < XG_SEC_COUNT; ++i) {
        sec[i].id = i;
        sec[i].offset = off;
        sec[i].length = x->sec[i].len;
        sec[i].crc = xg_crc32c(0, x->sec[i].data, x->sec[i].len);
        rep->section_bytes[i] = x->sec[i].len;
        off += (x->sec[i].len + XG_FMT_ALIGN - 1) / XG_FMT_ALIGN * XG_FMT_ALIGN;
    }
    /* The last section needs no padding after it. */
    h->file_size = sec[XG_SEC_COUNT - 1].offset + sec[XG_SEC_COUNT - 1].length;
    h->header_crc = 0;
    h->header_crc = xg_crc32c(0, head, tables);

    /* Whole or not at all: a temporary of its own, synced, renamed over
     * a regular file only (outfile.h). */
    if ((rc = xg_outfile_open(&out, out_path))) goto done;
    static const uint8_t zeros[XG_FMT_ALIGN];
    uint64_t pos = tables;
    /* A short write sets the stream's error, which the close reports. */
    int ok = fwrite(head, 1, tables, out.f) == tables;
    for (unsigned i = 0; ok && i < XG_SEC_COUNT; ++i) {
        const size_t pad = (size_t)(sec[i].offset - pos);
        /* An empty section has no buffer (fwrite's NULL). */
        ok = fwrite(zeros, 1, pad, out.f) == pad &&
             (!x->sec[i].len || fwrite(x->sec[i].data, 1, x->sec[i].len,
                                       out.f) == x->sec[i].len);
        pos = sec[i].offset + sec[i].length;
    }
    rc = xg_outfile_close(&out, 1);
    if (rc) goto done;
    rep->file_bytes = h->file_size;
    rc = XG_OK;
done:
    if (out.f) xg_outfile_close(&out, 0);
    free(head);
    return rc;
}

/* One slot's values into its keys and lengths (format.h XG_SEC_VALUES). */
struct value_sink {
    const struct exporter *x;
    uint8_t *keys, *lens;
    int too_long;
};

static int on_value(void *ctx, uint32_t docid, const char *v, size_t len,
                    uint32_t next, int in_chunk)
{
    struct value_sink *vs = ctx;
    const int64_t d = dense_of(vs->x, docid);
    /* The shard's documents up to its next value that a check() carries
     * on to it (format.h XG_FMT_VALUE_IN_CHUNK). */
    if (in_chunk)
        for (uint64_t g = (uint64_t)docid + vs->x->n_shards; g < next;
             g += vs->x->n_shards) {
            const int64_t e = dense_of(vs->x, (uint32_t)g);
            if (e >= 0) vs->lens[e] = XG_FMT_VALUE_IN_CHUNK;
        }
    if (d < 0)
        return xg_set_error(XG_ERR_FORMAT, "database has a value for a docid "
                            "that is not a live document (changed during "
                            "export?)");
    if (len > XG_FMT_VALUE_MAX) {
        vs->too_long = 1;
        return 1;
    }
    memcpy(vs->keys + (uint64_t)d * XG_FMT_VALUE_MAX, v, len);
    vs->lens[d] = (uint8_t)len;
    return 0;
}

/* VALUES: the table, each kept slot's per-shard bounds, then each kept
 * slot's keys and lengths. */
static int export_values(struct exporter *x, xg_db *db,
                         struct xg_export_report *rep)
{
    uint32_t slots[XG_EXPORT_VALUE_PROBE], n = 0;
    int rc = xg_shim_db_value_slots(db, XG_EXPORT_VALUE_PROBE, slots, &n);
    if (rc) return rc;
    struct xg_fmt_value_slot *tab = calloc(n ? n : 1, sizeof *tab);
    struct xg_fmt_value_bounds *bounds =
        calloc((size_t)(n ? n : 1) * x->n_shards, sizeof *bounds);
    struct xg_buf data = {0};
    struct value_sink vs = {x, NULL, NULL, 0};
    uint32_t kept = 0;
    if (!tab || !bounds) {
        rc = xg_set_error(XG_ERR_NOMEM, "out of memory (values)");
        goto done;
    }
    vs.keys = malloc(x->n_docs * XG_FMT_VALUE_MAX + 1);
    vs.lens = malloc(x->n_docs + 1);
    if (!vs.keys || !vs.lens) {
        rc = xg_set_error(XG_ERR_NOMEM, "out of memory (values)");
        goto done;
    }
    for (uint32_t i = 0; i < n; ++i) {
        struct xg_fmt_value_bounds *b = bounds + (size_t)kept * x->n_shards;
        int fits = 1;
        tab[i].slot = slots[i];
        for (uint32_t sh = 0; sh < x->n_shards && fits; ++sh)
            if ((rc = xg_shim_db_value_bounds(db, sh, slots[i], &b[sh],
                                              &fits)))
                goto done;
        memset(vs.keys, 0, x->n_docs * XG_FMT_VALUE_MAX);
        memset(vs.lens, 0, x->n_docs);
        vs.too_long = 0;
        if (fits && (rc = xg_shim_db_each_value(db, slots[i], on_value, &vs)) &&
            !vs.too_long)
            goto done;
        rc = XG_OK;
        if (!fits || vs.too_long) {
            ++rep->value_slots_long;
            continue;
        }
        tab[i].kept = 1;
        tab[i].bounds_first = (uint64_t)kept * x->n_shards;
        tab[i].keys_offset = data.len;
        if ((rc = xg_buf_append(&data, vs.keys, x->n_docs * XG_FMT_VALUE_MAX)))
            goto done;
        tab[i].lens_offset = data.len;
        if ((rc = xg_buf_append(&data, vs.lens, x->n_docs))) goto done;
        ++kept;
    }
    /* Offsets so far are into the keys and lengths; they follow the
     * table and the bounds. */
    const uint64_t head = sizeof(struct xg_fmt_values) + n * sizeof *tab +
                          (uint64_t)kept * x->n_shards * sizeof *bounds;
    for (uint32_t i = 0; i < n; ++i)
        if (tab[i].kept) {
            tab[i].keys_offset += head;
            tab[i].lens_offset += head;
        }
    struct xg_fmt_values v = {n, XG_EXPORT_VALUE_PROBE, 0};
    struct xg_buf *sec = &x->sec[XG_SEC_VALUES];
    if ((rc = xg_buf_append(sec, &v, sizeof v)) ||
        (rc = xg_buf_append(sec, tab, n * sizeof *tab)) ||
        (rc = xg_buf_append(sec, bounds,
                            (size_t)kept * x->n_shards * sizeof *bounds)) ||
        (rc = xg_buf_append(sec, data.data, data.len)))
        goto done;
    rep->value_slots = kept;
done:
    free(tab);
    free(bounds);
    free(vs.keys);
    free(vs.lens);
    xg_buf_free(&data);
    return rc;
}

void xg_export_opts_init(struct xg_export_opts *o)
{
    const struct xg_bm25_params bm25 = XG_BM25_DEFAULTS;
    memset(o, 0, sizeof *o);
    o->bloom_bits_per_posting = XG_EXPORT_DEFAULT_BLOOM_BITS;
    o->bloom_hashes = XG_EXPORT_DEFAULT_BLOOM_HASHES;
    o->hashseg_target = XG_EXPORT_DEFAULT_HASHSEG_TARGET;
    o->bm25 = bm25;
    o->impacts = 1;
    o->positions = 1;
    o->values = 1;
}

int xg_export(xg_db *db, const char *out_path,
              const struct xg_export_opts *o, struct xg_export_report *rep)
{
    struct exporter x;
    struct xg_db_stats st;
    int rc;
    memset(&x, 0, sizeof x);
    memset(rep, 0, sizeof *rep);
    x.o = o;
    x.t0 = x.last_draw = now();
    if (o->bloom_hashes == 0 || o->bloom_hashes > 16)
        return xg_set_error(XG_ERR_ARG, "--bloom-hashes must be 1..16");
    if (o->hashseg_target == 0)
        return xg_set_error(XG_ERR_ARG, "hash-segment target must be >= 1");
    if ((rc = xg_shim_db_stats(db, &st))) return rc;
    if (st.n_docs > UINT32_MAX - 1)
        return xg_set_error(XG_ERR_ARG, "database has too many documents");
    x.n_shards = st.n_shards;
    x.n_docs = st.n_docs;
    if ((rc = xg_shim_db_count_terms(db, &x.n_terms_hint))) return rc;
    if ((rc = xg_shim_db_has_positions(db, &x.positions)) ||
        (rc = xg_shim_db_position_bytes(db, &rep->xapian_position_bytes)))
        return rc;
    x.positions = x.positions && o->positions;
    xg_bm25_query_init(&o->bm25, st.n_docs, st.total_length, 1, &x.bm25);
    x.docids = malloc((st.n_docs + 1) * 4);
    x.doclens = malloc((st.n_docs + 1) * 4);
    x.dense = malloc((st.n_docs + 1) * 4);
    if (!x.docids || !x.doclens || !x.dense) {
        rc = xg_set_error(XG_ERR_NOMEM, "out of memory for %llu documents",
                          (unsigned long long)st.n_docs);
        goto done;
    }
    if ((rc = xg_shim_db_doclens(db, x.docids, x.doclens))) goto done;
    if ((rc = xg_buf_append(&x.sec[XG_SEC_DOCIDS], x.docids, st.n_docs * 4)) ||
        (rc = xg_buf_append(&x.sec[XG_SEC_DOCLENS], x.doclens, st.n_docs * 4)))
        goto done;
    if (o->impacts) {
        /* K_d for the header's parameters: the impacts' denominators. */
        x.kd = malloc((st.n_docs + 1) * sizeof *x.kd);
        if (!x.kd) {
            rc = xg_set_error(XG_ERR_NOMEM, "out of memory (impacts)");
            goto done;
        }
        for (uint64_t i = 0; i < st.n_docs; ++i)
            x.kd[i] = xg_bm25_kd(&x.bm25, x.doclens[i]);
    }
    /* A direct docid map when the docid space is not much larger than the
     * collection; a sparse space (10^4 docs up to docid 2*10^8) gallops. */
    if ((uint64_t)st.last_docid <= 4 * st.n_docs + 65536) {
        x.map_size = st.last_docid + 1;
        x.dense_map = calloc(x.map_size, 4);
        if (!x.dense_map) {
            rc = xg_set_error(XG_ERR_NOMEM, "out of memory");
            goto done;
        }
        for (uint64_t i = 0; i < st.n_docs; ++i)
            if (x.docids[i] < x.map_size) x.dense_map[x.docids[i]] = (uint32_t)i + 1;
    }
    if (o->values && (rc = export_values(&x, db, rep))) goto done;
    x.dict.dict = &x.sec[XG_SEC_DICT];
    x.dict.index = &x.sec[XG_SEC_DICT_INDEX];
    double t_terms = now();
    struct ring *ring = calloc(1, sizeof *ring);
    pthread_t encoder;
    if (!ring) {
        rc = xg_set_error(XG_ERR_NOMEM, "out of memory");
        goto done;
    }
    ring->x = &x;
    pthread_mutex_init(&ring->m, NULL);
    pthread_cond_init(&ring->not_full, NULL);
    pthread_cond_init(&ring->not_empty, NULL);
    if (pthread_create(&encoder, NULL, encoder_main, ring)) {
        free(ring);
        rc = xg_set_error(XG_ERR_NOMEM, "cannot start the encoder thread");
        goto done;
    }
    rc = xg_shim_db_each_term(db, x.positions ? XG_TERMS_POSITIONS : 0,
                              on_term, ring);
    int read_rc = rc;
    char read_err[512];
    snprintf(read_err, sizeof read_err, "%s", xg_last_error());
    pthread_mutex_lock(&ring->m);
    if (!read_rc && ring->c[ring->head % RING].n_terms) ++ring->head;
    ring->done = 1;
    if (read_rc) ring->failed = 1;
    pthread_cond_signal(&ring->not_empty);
    pthread_mutex_unlock(&ring->m);
    pthread_join(encoder, NULL);
    for (int i = 0; i < RING; ++i) {
        xg_buf_free(&ring->c[i].terms);
        xg_buf_free(&ring->c[i].meta);
        xg_buf_free(&ring->c[i].docids);
        xg_buf_free(&ring->c[i].wdfs);
        xg_buf_free(&ring->c[i].shard_df);
        xg_buf_free(&ring->c[i].pos_counts);
        xg_buf_free(&ring->c[i].positions);
    }
    pthread_mutex_destroy(&ring->m);
    pthread_cond_destroy(&ring->not_full);
    pthread_cond_destroy(&ring->not_empty);
    free(ring);
    double t_end = now();
    if (x.rc) {
        rc = xg_set_error(x.rc, "%s", x.err);
        goto done;
    }
    if (read_rc) {
        rc = xg_set_error(read_rc, "%s", read_err);
        goto done;
    }
    if (o->progress) draw_progress(&x, 1);
    if ((rc = xg_dict_finish(&x.dict))) goto done;
    if ((rc = xg_buf_append(&x.sec[XG_SEC_TERMS], x.terms_lr.data,
                            x.terms_lr.len)) ||
        (rc = xg_buf_append(&x.sec[XG_SEC_IMPACTS], x.impact_codes.data,
                            x.impact_codes.len)))
        goto done;
    if (x.positions) {
        /* The final offset (the data's length), then the data. */
        const uint64_t end = x.pos_data.len;
        if ((rc = xg_buf_append(&x.sec[XG_SEC_POSITIONS], &end, sizeof end)) ||
            (rc = xg_buf_append(&x.sec[XG_SEC_POSITIONS], x.pos_data.data,
                                x.pos_data.len)))
            goto done;
    }
    rep->read_seconds = (t_terms - x.t0) + (t_end - t_terms - x.in_callback);
    double t_write = now();
    if ((rc = write_index(&x, db, out_path, &st, rep))) goto done;
    if (xg_knob_export_timing())
        fprintf(stderr, "export phases: doclens %.3f s, terms %.3f s (reader "
                "copying %.3f s, encoder busy %.3f s), write %.3f s\n",
                t_terms - x.t0, t_end - t_terms, x.in_callback, x.encoding,
                now() - t_write);
    rep->n_docs = x.n_docs;
    rep->n_terms = x.n_terms;
    rep->n_postings = x.n_postings;
    rep->n_blocks = x.n_blocks;
    rep->positions = x.positions;
    rep->seconds = now() - x.t0;
done:
    if (rc && o->progress) fputc('\n', stderr);
    for (unsigned i = 0; i < XG_SEC_COUNT; ++i) xg_buf_free(&x.sec[i]);
    xg_buf_free(&x.terms_lr);
    xg_buf_free(&x.impact_codes);
    xg_buf_free(&x.pos_data);
    free(x.kd);
    free(x.dict.prev);
    free(x.docids);
    free(x.doclens);
    free(x.dense);
    free(x.dense_map);
    return rc;
}
