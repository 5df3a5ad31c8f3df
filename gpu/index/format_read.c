/** @file format_read.c
 *  @brief GPU index reader: map, verify everything once, then serve reads.
 *
 *  The file is untrusted input (fuzzed by tests/fuzz_format.c): every size
 *  and offset is checked against the mapping before anything is read through
 *  it, so a truncated, corrupted or hostile file gives a one-line error and
 *  never a crash.
 */
#include "format_read.h"
#include "list_check.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "crc32c.h"
#include "termdict.h"
#include "../runtime/error.h"
#include "listmeta.h"
#include "pfor.h"

static const char *const section_names[XG_SEC_COUNT] = {
    "DICT", "DICT_INDEX", "TERMS", "SHARD_DF", "SKIP",
    "POSTINGS", "BLOOM", "HASHSEG", "DOCIDS", "DOCLENS", "IMPACTS",
    "POSITIONS", "VALUES",
};

const char *xg_fmt_section_name(unsigned id)
{
    return id < XG_SEC_COUNT ? section_names[id] : "?";
}

void xg_fmt_close(struct xg_index *ix)
{
    if (!ix) return;
    if (ix->base) munmap((void *)ix->base, ix->size);
    xg_dict_hash_free(&ix->dict_hash);
    free(ix->path);
    free(ix);
}

#define FAIL(code, ...)                                                     \
    do {                                                                    \
        char msg_[512];                                                     \
        snprintf(msg_, sizeof msg_, __VA_ARGS__);                           \
        rc = xg_set_error(code, "%s: %s", path, msg_);                      \
        goto fail;                                                          \
    } while (0)

/* An optional section: *present when the header's flag is set; without
 * the flag the section must be empty. */
static int optional_section(const struct xg_index *ix, const char *path,
                            unsigned id, uint32_t flag, int *present)
{
    *present = (ix->hdr->flags & flag) != 0;
    if (!*present && ix->sec[id].length)
        return xg_set_error(XG_ERR_FORMAT, "%s: section %s present without "
                            "its flag", path, section_names[id]);
    return XG_OK;
}

/* IMPACTS: empty without the flag; otherwise one entry per term whose
 * code offsets are the prefix sums of df, then n_postings codes. */
static int check_impacts(struct xg_index *ix, const char *path)
{
    int rc = XG_OK;
    const struct xg_fmt_header *h = ix->hdr;
    const struct xg_fmt_section *s = &ix->sec[XG_SEC_IMPACTS];
    int present;
    ix->impacts = NULL;
    ix->impact_codes = NULL;
    if ((rc = optional_section(ix, path, XG_SEC_IMPACTS, XG_FMT_FLAG_IMPACTS,
                               &present)) || !present)
        return rc;
    if (h->n_terms > UINT64_MAX / 32 || h->n_postings > UINT64_MAX / 2 ||
        s->length != h->n_terms * sizeof(struct xg_fmt_impact) +
                         h->n_postings)
        FAIL(XG_ERR_FORMAT, "section IMPACTS has the wrong size");
    ix->impacts = (const struct xg_fmt_impact *)(ix->base + s->offset);
    ix->impact_codes = (const uint8_t *)(ix->impacts + h->n_terms);
    uint64_t at = 0;
    for (uint64_t t = 0; t < h->n_terms; ++t) {
        const struct xg_fmt_impact *im = &ix->impacts[t];
        /* !(x >= 0) also catches NaN. */
        if (im->code_offset != at || !(im->scale >= 0) ||
            im->scale > 1.0)
            FAIL(XG_ERR_FORMAT, "term %llu: bad impact entry",
                 (unsigned long long)t);
        at += ix->terms[t].df;
    }
    return XG_OK;
fail:
    return rc;
}

/* The fault in one block's position data (positions.h) holding `expect`
 * postings' entries, or NULL: each count and position must be there,
 * every gap >= 1, no position past 2^32 - 1, no byte left over. */
static const char *positions_fault(const uint8_t *p, const uint8_t *end,
                                   uint32_t expect)
{
    for (uint32_t j = 0; j < expect; ++j) {
        uint32_t c, v;
        uint64_t pos = 0;
        if (xg_pos_varint(&p, end, &c)) return "a position count is cut off";
        /* Each position takes a byte at least. */
        if (c > (uint64_t)(end - p)) return "a position list is cut off";
        for (uint32_t k = 0; k < c; ++k) {
            if (xg_pos_varint(&p, end, &v))
                return "a position is cut off or too large";
            if (k && v == 0) return "a zero position gap";
            pos = k ? pos + v : v;
            if (pos > UINT32_MAX) return "a position past 2^32 - 1";
        }
    }
    return p == end ? NULL : "bytes left over after the block's postings";
}

/* POSITIONS: empty without the flag; otherwise n_blocks + 1 offsets that
 * start at 0, ascend and end at the data's length, then the data, where
 * every non-empty block decodes to exactly its postings' entries.  Runs
 * after the terms' skip ranges are checked. */
static int check_positions(struct xg_index *ix, const char *path)
{
    int rc = XG_OK;
    const struct xg_fmt_header *h = ix->hdr;
    const struct xg_fmt_section *s = &ix->sec[XG_SEC_POSITIONS];
    int present;
    ix->pos_offsets = NULL;
    ix->pos_data = NULL;
    if ((rc = optional_section(ix, path, XG_SEC_POSITIONS,
                               XG_FMT_FLAG_POSITIONS, &present)) || !present)
        return rc;
    if (h->n_blocks >= s->length / 8)
        FAIL(XG_ERR_FORMAT, "section POSITIONS is too small for its %llu "
             "block offsets", (unsigned long long)h->n_blocks + 1);
    const uint64_t *off = (const uint64_t *)(ix->base + s->offset);
    const uint8_t *data = (const uint8_t *)(off + h->n_blocks + 1);
    const uint64_t len = s->length - (h->n_blocks + 1) * 8;
    if (off[0] != 0 || off[h->n_blocks] != len)
        FAIL(XG_ERR_FORMAT, "section POSITIONS: block offsets do not span "
             "its data (%llu to %llu of %llu bytes)",
             (unsigned long long)off[0],
             (unsigned long long)off[h->n_blocks], (unsigned long long)len);
    for (uint64_t t = 0; t < h->n_terms; ++t) {
        const struct xg_fmt_term *e = &ix->terms[t];
        const uint32_t nb = xg_fmt_n_blocks(ix, t);
        for (uint32_t b = 0; b < nb; ++b) {
            const uint64_t g = e->skip_first + b;
            if (off[g + 1] < off[g] || off[g + 1] > len)
                FAIL(XG_ERR_FORMAT, "term %llu block %u: position offsets "
                     "out of order", (unsigned long long)t, b);
            if (off[g + 1] == off[g]) continue;
            const uint32_t left = e->df - b * XG_FMT_BLOCK;
            const char *fault = positions_fault(
                data + off[g], data + off[g + 1],
                left < XG_FMT_BLOCK ? left : XG_FMT_BLOCK);
            if (fault)
                FAIL(XG_ERR_FORMAT, "term %llu block %u: positions: %s",
                     (unsigned long long)t, b, fault);
        }
    }
    ix->pos_offsets = off;
    ix->pos_data = data;
    return XG_OK;
fail:
    return rc;
}

/* VALUES: empty without the flag; otherwise its table, slots ascending
 * below `probed`, and each kept slot's bounds, keys and lengths inside
 * the section, lengths at most XG_FMT_VALUE_MAX. */
static int check_values(struct xg_index *ix, const char *path)
{
    int rc = XG_OK;
    const struct xg_fmt_header *h = ix->hdr;
    const struct xg_fmt_section *s = &ix->sec[XG_SEC_VALUES];
    int present;
    ix->values = NULL;
    if ((rc = optional_section(ix, path, XG_SEC_VALUES, XG_FMT_FLAG_VALUES,
                               &present)) || !present)
        return rc;
    const uint8_t *base = ix->base + s->offset;
    const struct xg_fmt_values *v = (const struct xg_fmt_values *)base;
    if (s->length < sizeof *v ||
        (s->length - sizeof *v) / sizeof(struct xg_fmt_value_slot) <
            v->n_slots)
        FAIL(XG_ERR_FORMAT, "section VALUES is too small for its table");
    const struct xg_fmt_value_slot *sl =
        (const struct xg_fmt_value_slot *)(v + 1);
    const uint64_t n_bounds = (s->length - sizeof *v -
                               (uint64_t)v->n_slots * sizeof *sl) /
                              sizeof(struct xg_fmt_value_bounds);
    const struct xg_fmt_value_bounds *b =
        (const struct xg_fmt_value_bounds *)(sl + v->n_slots);
    const uint64_t bounds_end = (uint64_t)((const uint8_t *)b - base);
    for (uint32_t i = 0; i < v->n_slots; ++i) {
        const struct xg_fmt_value_slot *e = &sl[i];
        if (e->slot >= v->probed || (i && e->slot <= sl[i - 1].slot) ||
            e->kept > 1)
            FAIL(XG_ERR_FORMAT, "VALUES: bad entry for slot %u", e->slot);
        if (!e->kept) continue;
        if (e->bounds_first > n_bounds ||
            n_bounds - e->bounds_first < h->n_shards ||
            e->keys_offset < bounds_end || e->keys_offset > s->length ||
            (s->length - e->keys_offset) / XG_FMT_VALUE_MAX < h->n_docs ||
            e->lens_offset < bounds_end || e->lens_offset > s->length ||
            s->length - e->lens_offset < h->n_docs)
            FAIL(XG_ERR_FORMAT, "VALUES: slot %u lies outside the section",
                 e->slot);
        for (uint32_t sh = 0; sh < h->n_shards; ++sh) {
            const struct xg_fmt_value_bounds *bd = &b[e->bounds_first + sh];
            if (bd->lo_len > XG_FMT_VALUE_MAX || bd->hi_len > XG_FMT_VALUE_MAX)
                FAIL(XG_ERR_FORMAT, "VALUES: slot %u shard %u: bad bounds",
                     e->slot, sh);
        }
        const uint8_t *lens = base + e->lens_offset;
        for (uint64_t d = 0; d < h->n_docs; ++d)
            if ((lens[d] & XG_FMT_VALUE_LEN_MASK) > XG_FMT_VALUE_MAX ||
                (lens[d] & XG_FMT_VALUE_LEN_MASK &&
                 lens[d] & XG_FMT_VALUE_IN_CHUNK))
                FAIL(XG_ERR_FORMAT, "VALUES: slot %u: document %llu: bad "
                     "value length", e->slot, (unsigned long long)d);
    }
    ix->values = v;
    ix->value_slots = sl;
    ix->value_bounds = b;
    return XG_OK;
fail:
    return rc;
}

int xg_fmt_value_slot(const struct xg_index *ix, uint32_t slot,
                      const struct xg_fmt_value_slot **out)
{
    *out = NULL;
    if (!ix->values)
        return xg_set_error(XG_ERR_UNSUPPORTED, "unsupported: a value range, "
                            "and %s holds no values", ix->path);
    uint32_t lo = 0, hi = ix->values->n_slots;
    while (lo < hi) {
        const uint32_t mid = lo + (hi - lo) / 2;
        if (ix->value_slots[mid].slot < slot) lo = mid + 1;
        else hi = mid;
    }
    if (lo < ix->values->n_slots && ix->value_slots[lo].slot == slot) {
        if (!ix->value_slots[lo].kept)
            return xg_set_error(XG_ERR_UNSUPPORTED, "unsupported: a value "
                                "range on slot %u, whose values %s does not "
                                "hold (longer than %u bytes)", slot, ix->path,
                                XG_FMT_VALUE_MAX);
        *out = &ix->value_slots[lo];
        return XG_OK;
    }
    if (slot >= ix->values->probed)
        return xg_set_error(XG_ERR_UNSUPPORTED, "unsupported: a value range "
                            "on slot %u (%s holds slots below %u)", slot,
                            ix->path, ix->values->probed);
    return XG_OK;   /* read, and no document has a value there */
}

/* Structural checks of the sections against the header; rc or XG_OK. */
static int check_structure(struct xg_index *ix, const char *path)
{
    int rc = XG_OK;
    const struct xg_fmt_header *h = ix->hdr;
    const struct xg_fmt_section *s = ix->sec;
    uint64_t n_terms = h->n_terms, n_docs = h->n_docs;

    if (h->block_size != XG_FMT_BLOCK)
        FAIL(XG_ERR_FORMAT, "unsupported block size %u", h->block_size);
    ix->n_buckets = (n_terms + XG_FMT_DICT_BUCKET - 1) / XG_FMT_DICT_BUCKET;
    if (s[XG_SEC_DICT_INDEX].length != (ix->n_buckets + 1) * 8)
        FAIL(XG_ERR_FORMAT, "section DICT_INDEX has the wrong size");
    if (n_terms > (UINT64_MAX / 128) ||
        s[XG_SEC_TERMS].length != n_terms * (sizeof(struct xg_fmt_term) +
                                             sizeof(struct xg_fmt_term_lr)))
        FAIL(XG_ERR_FORMAT, "section TERMS has the wrong size");
    if (s[XG_SEC_SHARD_DF].length != n_terms * h->n_shards * 4)
        FAIL(XG_ERR_FORMAT, "section SHARD_DF has the wrong size");
    if (s[XG_SEC_SKIP].length != h->n_blocks * sizeof(struct xg_fmt_skip))
        FAIL(XG_ERR_FORMAT, "section SKIP has the wrong size");
    if (n_docs > UINT32_MAX || s[XG_SEC_DOCIDS].length != n_docs * 4 ||
        s[XG_SEC_DOCLENS].length != n_docs * 4)
        FAIL(XG_ERR_FORMAT, "document sections have the wrong size");
    if (s[XG_SEC_BLOOM].length % 8 || s[XG_SEC_HASHSEG].length % 4 ||
        s[XG_SEC_POSTINGS].length % 4)
        FAIL(XG_ERR_FORMAT, "section sizes are not word aligned");

    const uint8_t *b = ix->base;
    ix->dict = b + s[XG_SEC_DICT].offset;
    ix->dict_index = (const uint64_t *)(b + s[XG_SEC_DICT_INDEX].offset);
    ix->terms = (const struct xg_fmt_term *)(b + s[XG_SEC_TERMS].offset);
    ix->terms_lr = (const struct xg_fmt_term_lr *)(ix->terms + n_terms);
    ix->shard_df = (const uint32_t *)(b + s[XG_SEC_SHARD_DF].offset);
    ix->skip = (const struct xg_fmt_skip *)(b + s[XG_SEC_SKIP].offset);
    ix->postings = b + s[XG_SEC_POSTINGS].offset;
    ix->postings_len = s[XG_SEC_POSTINGS].length;
    ix->bloom = (const uint64_t *)(b + s[XG_SEC_BLOOM].offset);
    ix->bloom_words = s[XG_SEC_BLOOM].length / 8;
    ix->hashseg = (const uint32_t *)(b + s[XG_SEC_HASHSEG].offset);
    ix->hashseg_len = s[XG_SEC_HASHSEG].length / 4;
    ix->docids = (const uint32_t *)(b + s[XG_SEC_DOCIDS].offset);
    ix->doclens = (const uint32_t *)(b + s[XG_SEC_DOCLENS].offset);
    if ((rc = check_impacts(ix, path))) return rc;

    if ((rc = xg_dict_hash_build(ix->dict, s[XG_SEC_DICT].length,
                                 ix->dict_index, ix->n_buckets, n_terms,
                                 &ix->dict_hash)))
        FAIL(rc, "%s", xg_last_error());

    /* Documents: docids strictly ascending, lengths add up. */
    uint64_t total = 0;
    for (uint64_t i = 0; i < n_docs; ++i) {
        if (ix->docids[i] == 0 || (i && ix->docids[i] <= ix->docids[i - 1]))
            FAIL(XG_ERR_FORMAT, "document %llu: docids not ascending",
                 (unsigned long long)i);
        total += ix->doclens[i];
    }
    if (n_docs && ix->docids[n_docs - 1] > h->last_docid)
        FAIL(XG_ERR_FORMAT, "docid beyond the last docid");
    if (total != h->total_length)
        FAIL(XG_ERR_FORMAT, "document lengths do not add up to the total");

    /* Terms: contiguous skip ranges, offsets inside their sections. */
    uint64_t next_skip = 0, postings = 0;
    for (uint64_t t = 0; t < n_terms; ++t) {
        const struct xg_fmt_term *e = &ix->terms[t];
        uint64_t nb = xg_fmt_n_blocks(ix, t);
        if (e->df == 0 || e->df > n_docs)
            FAIL(XG_ERR_FORMAT, "term %llu: bad document frequency",
                 (unsigned long long)t);
        if (e->skip_first != next_skip || nb > h->n_blocks - next_skip)
            FAIL(XG_ERR_FORMAT, "term %llu: bad skip range",
                 (unsigned long long)t);
        if (e->postings_offset >= ix->postings_len ||
            e->postings_offset % 4)
            FAIL(XG_ERR_FORMAT, "term %llu: postings offset out of range",
                 (unsigned long long)t);
        if (e->bloom_offset > ix->bloom_words ||
            e->bloom_words > ix->bloom_words - e->bloom_offset)
            FAIL(XG_ERR_FORMAT, "term %llu: Bloom filter out of range",
                 (unsigned long long)t);
        if (e->hashseg_shift > 31)
            FAIL(XG_ERR_FORMAT, "term %llu: bad hash-segment shift",
                 (unsigned long long)t);
        uint64_t nseg = xg_hashseg_count((uint32_t)n_docs, e->hashseg_shift);
        if (e->hashseg_offset > ix->hashseg_len ||
            nseg + 1 > ix->hashseg_len - e->hashseg_offset)
            FAIL(XG_ERR_FORMAT, "term %llu: hash segments out of range",
                 (unsigned long long)t);
        uint64_t sdf = 0;
        for (uint32_t sh = 0; sh < h->n_shards; ++sh)
            sdf += ix->shard_df[t * h->n_shards + sh];
        if (sdf != e->df)
            FAIL(XG_ERR_FORMAT, "term %llu: shard frequencies disagree",
                 (unsigned long long)t);
        for (uint64_t k = 0; k < nb; ++k) {
            const struct xg_fmt_skip *sk = &ix->skip[next_skip + k];
            if (sk->first > sk->last || sk->last >= n_docs ||
                sk->offset % 4 ||
                e->postings_offset + sk->offset >= ix->postings_len ||
                (k && sk->first <= ix->skip[next_skip + k - 1].last))
                FAIL(XG_ERR_FORMAT, "term %llu: bad skip entry %llu",
                     (unsigned long long)t, (unsigned long long)k);
        }
        next_skip += nb;
        postings += e->df;
    }
    if (next_skip != h->n_blocks || postings != h->n_postings)
        FAIL(XG_ERR_FORMAT, "block or posting counts do not add up");
    if ((rc = check_positions(ix, path))) return rc;
    return check_values(ix, path);
fail:
    return rc;
}

int xg_fmt_open(const char *path, struct xg_index **out)
{
    int rc = XG_OK;
    int fd = -1;
    struct xg_index *ix = calloc(1, sizeof *ix);
    *out = NULL;
    if (!ix || !(ix->path = strdup(path))) {
        free(ix);
        return xg_set_error(XG_ERR_NOMEM, "%s: out of memory", path);
    }
    /* O_NONBLOCK: opening a FIFO (or a device) must not wait for a
     * writer before fstat refuses it. */
    fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) FAIL(XG_ERR_IO, "cannot open index: %s", strerror(errno));
    struct stat st;
    if (fstat(fd, &st) < 0) FAIL(XG_ERR_IO, "cannot stat: %s", strerror(errno));
    if (!S_ISREG(st.st_mode)) FAIL(XG_ERR_IO, "not a regular file");
    if ((uint64_t)st.st_size < sizeof(struct xg_fmt_header))
        FAIL(XG_ERR_FORMAT, "truncated index (%lld bytes, header needs 512)",
             (long long)st.st_size);
    ix->size = (size_t)st.st_size;
    void *m = mmap(NULL, ix->size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (m == MAP_FAILED) FAIL(XG_ERR_IO, "cannot map: %s", strerror(errno));
    ix->base = m;
    close(fd);
    fd = -1;

    const struct xg_fmt_header *h = (const void *)ix->base;
    ix->hdr = h;
    if (memcmp(h->magic, XG_FMT_MAGIC, 8) != 0)
        FAIL(XG_ERR_FORMAT, "not a xapian-gpu index (bad magic)");
    if (h->endian_tag != XG_FMT_ENDIAN_TAG)
        FAIL(XG_ERR_VERSION, "index written with another byte order");
    if (h->version != XG_FMT_VERSION)
        FAIL(XG_ERR_VERSION, "index format version %u, this build reads %u "
             "(re-run xapian-gpu export)", h->version, XG_FMT_VERSION);
    if (h->file_size != ix->size)
        FAIL(XG_ERR_FORMAT, "truncated or extended index (%zu bytes, header "
             "says %llu)", ix->size, (unsigned long long)h->file_size);
    if (h->n_shards == 0 || h->n_shards > 65536 ||
        h->n_sections != XG_SEC_COUNT ||
        XG_FMT_TABLES_END(h->n_shards) > ix->size)
        FAIL(XG_ERR_FORMAT, "bad shard or section count");
    {
        uint64_t tables = XG_FMT_TABLES_END(h->n_shards);
        uint32_t zero = 0, crc;
        crc = xg_crc32c(0, ix->base, 16);
        crc = xg_crc32c(crc, &zero, 4);
        crc = xg_crc32c(crc, ix->base + 20, tables - 20);
        if (crc != h->header_crc)
            FAIL(XG_ERR_CHECKSUM, "header checksum mismatch");
    }
    ix->shards = (const void *)(ix->base + XG_FMT_SHARDS_OFFSET);
    ix->sec = (const void *)(ix->base + XG_FMT_SECTIONS_OFFSET(h->n_shards));
    for (unsigned i = 0; i < XG_SEC_COUNT; ++i) {
        const struct xg_fmt_section *s = &ix->sec[i];
        if (s->id != i || s->offset % XG_FMT_ALIGN ||
            s->offset < XG_FMT_TABLES_END(h->n_shards) ||
            s->offset > ix->size || s->length > ix->size - s->offset)
            FAIL(XG_ERR_FORMAT, "section %s out of bounds (truncated?)",
                 section_names[i]);
        if (xg_crc32c(0, ix->base + s->offset, s->length) != s->crc)
            FAIL(XG_ERR_CHECKSUM, "checksum mismatch in section %s",
                 section_names[i]);
    }
    if ((rc = check_structure(ix, path))) goto fail;
    /* The values the engines trust, against the postings themselves. */
    if ((rc = xg_fmt_check_lists(ix))) goto fail;
    *out = ix;
    return XG_OK;
fail:
    if (fd >= 0) close(fd);
    xg_fmt_close(ix);
    return rc;
}

int xg_fmt_check_shards(const struct xg_index *ix, uint32_t n_shards,
                        const char *const *uuids, const uint64_t *revisions)
{
    const struct xg_fmt_header *h = ix->hdr;
    if (h->n_shards != n_shards)
        return xg_set_error(XG_ERR_STALE, "%s: stale index: exported from %u "
                            "shard(s), the database has %u (re-run xapian-gpu "
                            "export)", ix->path, h->n_shards, n_shards);
    for (uint32_t i = 0; i < n_shards; ++i) {
        const struct xg_fmt_shard *s = &ix->shards[i];
        if (strncmp(s->uuid, uuids[i], XG_FMT_UUID_LEN) != 0)
            return xg_set_error(XG_ERR_STALE, "%s: stale index: shard %u has "
                                "uuid %s, the index was exported from %.40s "
                                "(re-run xapian-gpu export)", ix->path, i,
                                uuids[i], s->uuid);
        if (s->revision != revisions[i])
            return xg_set_error(XG_ERR_STALE, "%s: stale index: shard %u is "
                                "at revision %llu, the index was exported at "
                                "%llu (re-run xapian-gpu export)", ix->path,
                                i, (unsigned long long)revisions[i],
                                (unsigned long long)s->revision);
    }
    return XG_OK;
}

int64_t xg_fmt_lookup(const struct xg_index *ix, const char *term,
                      size_t len)
{
    return xg_dict_lookup(ix->dict, ix->sec[XG_SEC_DICT].length,
                          ix->dict_index, &ix->dict_hash, ix->n_buckets,
                          ix->hdr->n_terms,
                          term, len);
}

int xg_fmt_prefix(const struct xg_index *ix, const char *prefix, size_t len,
                  int (*fn)(void *ctx, uint64_t id, const char *t, size_t n),
                  void *ctx)
{
    return xg_dict_prefix(ix->dict, ix->sec[XG_SEC_DICT].length,
                          ix->dict_index, ix->n_buckets, ix->hdr->n_terms,
                          prefix, len, fn, ctx);
}

static int block_decode(const struct xg_index *ix, uint64_t t, uint32_t blk,
                        uint32_t *docs, uint32_t *wdfs, uint32_t *n,
                        uint32_t *bytes);

int xg_fmt_block_decode(const struct xg_index *ix, uint64_t t, uint32_t blk,
                        uint32_t *docs, uint32_t *wdfs, uint32_t *n)
{
    uint32_t bytes;
    return block_decode(ix, t, blk, docs, wdfs, n, &bytes);
}

int xg_fmt_list_bytes(const struct xg_index *ix, uint64_t t, uint64_t *bytes)
{
    uint32_t docs[XG_FMT_BLOCK], wdfs[XG_FMT_BLOCK], n, last_bytes = 0;
    const uint32_t last = xg_fmt_n_blocks(ix, t) - 1;
    int rc = block_decode(ix, t, last, docs, wdfs, &n, &last_bytes);
    if (rc) return rc;
    *bytes = (uint64_t)ix->skip[ix->terms[t].skip_first + last].offset +
             last_bytes;
    return XG_OK;
}

/* Where block blk of term t starts in POSTINGS, and the 32-bit words
 * from there to the section's end. */
static const uint32_t *block_words(const struct xg_index *ix, uint64_t t,
                                   uint32_t blk, size_t *avail)
{
    const struct xg_fmt_term *e = &ix->terms[t];
    const uint64_t at = e->postings_offset + ix->skip[e->skip_first + blk].offset;
    *avail = (size_t)((ix->postings_len - at) / 4);
    return (const uint32_t *)(ix->postings + at);
}

/* Block blk's doc numbers, checked: *n of them, *used the 32-bit words
 * their encoding took (its wdfs follow). */
static int docs_decode(const struct xg_index *ix, uint64_t t, uint32_t blk,
                       uint32_t *docs, uint32_t *n, uint32_t *used)
{
    const struct xg_fmt_term *e = &ix->terms[t];
    const struct xg_fmt_skip *sk = &ix->skip[e->skip_first + blk];
    uint32_t expect = e->df - blk * XG_FMT_BLOCK;
    if (expect > XG_FMT_BLOCK) expect = XG_FMT_BLOCK;
    size_t avail;
    const uint32_t *w = block_words(ix, t, blk, &avail);
    uint32_t nd = 0;
    *used = 0;
    *n = 0;
    if (xg_pfor_decode_ref(w, avail, docs, &nd, used) || nd != expect ||
        docs[0] != 0)
        return xg_set_error(XG_ERR_FORMAT, "%s: term %llu block %u is corrupt",
                            ix->path, (unsigned long long)t, blk);
    for (uint32_t i = 1; i < nd; ++i)
        if (docs[i] == 0)
            return xg_set_error(XG_ERR_FORMAT, "%s: term %llu block %u: "
                                "docids not ascending", ix->path,
                                (unsigned long long)t, blk);
    xg_pfor_prefix_sum(docs, nd, sk->first);
    for (uint32_t i = 1; i < nd; ++i)
        if (docs[i] <= docs[i - 1])
            return xg_set_error(XG_ERR_FORMAT, "%s: term %llu block %u: "
                                "docids wrap around", ix->path,
                                (unsigned long long)t, blk);
    if (docs[nd - 1] != sk->last)
        return xg_set_error(XG_ERR_FORMAT, "%s: term %llu block %u does not "
                            "end at its skip entry", ix->path,
                            (unsigned long long)t, blk);
    *n = nd;
    return XG_OK;
}

static int block_decode(const struct xg_index *ix, uint64_t t, uint32_t blk,
                        uint32_t *docs, uint32_t *wdfs, uint32_t *n,
                        uint32_t *bytes)
{
    uint32_t used = 0, used2 = 0, nw = 0;
    int rc = docs_decode(ix, t, blk, docs, n, &used);
    if (rc) return rc;
    size_t avail;
    const uint32_t *w = block_words(ix, t, blk, &avail);
    if (xg_pfor_decode_ref(w + used, avail - used, wdfs, &nw, &used2) ||
        nw != *n)
        return xg_set_error(XG_ERR_FORMAT, "%s: term %llu block %u is corrupt",
                            ix->path, (unsigned long long)t, blk);
    *bytes = 4 * (used + used2);
    return XG_OK;
}

int xg_fmt_first_wdf(const struct xg_index *ix, uint64_t t, uint32_t *wdf)
{
    size_t avail;
    const uint32_t *w = block_words(ix, t, 0, &avail);
    uint32_t gap, used, used2;
    if (xg_pfor_first(w, avail, &gap, &used) ||
        xg_pfor_first(w + used, avail - used, wdf, &used2))
        return xg_set_error(XG_ERR_FORMAT, "%s: term %llu block 0 is corrupt",
                            ix->path, (unsigned long long)t);
    return XG_OK;
}

int xg_fmt_block_docs(const struct xg_index *ix, uint64_t t, uint32_t blk,
                      uint32_t *docs, uint32_t *n)
{
    uint32_t used;
    return docs_decode(ix, t, blk, docs, n, &used);
}

char *xg_fmt_default_path(const char *db_path)
{
    struct stat st;
    size_t n = strlen(db_path);
    char *p = malloc(n + 32);
    if (!p) return NULL;
    while (n > 1 && db_path[n - 1] == '/') --n;
    if (stat(db_path, &st) == 0 && S_ISDIR(st.st_mode))
        snprintf(p, n + 32, "%.*s/xapian-gpu.idx", (int)n, db_path);
    else
        snprintf(p, n + 32, "%.*s.xapian-gpu.idx", (int)n, db_path);
    return p;
}
