/** @file tokenize.c
 *  @brief UTF-8 validation and the TermGenerator-style tokenizer of the
 *         weight command's docs.tsv input (rules in text/tokenize.h and
 *         docs/weight.md; Xapian 1.4.22 termgenerator_internal.cc was read
 *         to get them right, its code was not copied).
 */
#include <string.h>

#include "tokenize.h"

uint32_t xg_text_wordchar(uint32_t cp, int *digit)
{
    *digit = 0;
    if (cp < 128) {
        if (cp >= 'a' && cp <= 'z') return cp;
        if (cp >= 'A' && cp <= 'Z') return cp + 32;
        if (cp >= '0' && cp <= '9') { *digit = 1; return cp; }
        return cp == '_' ? cp : 0;
    }
    unsigned lo = 0, hi = xg_text_n_uranges;
    while (lo < hi) {
        unsigned mid = (lo + hi) / 2;
        if (xg_text_uranges[mid].last < cp) lo = mid + 1; else hi = mid;
    }
    if (lo == xg_text_n_uranges || xg_text_uranges[lo].first > cp) return 0;
    const struct xg_text_urange *r = &xg_text_uranges[lo];
    *digit = r->digit;
    if (r->alt && ((cp - r->first) & 1)) return cp;
    return (uint32_t)((int32_t)cp + r->delta);
}

size_t xg_text_utf8_valid(const char *s, size_t n)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t i = 0;
    while (i < n) {
        unsigned c = u[i];
        if (c < 0x80) { ++i; continue; }
        size_t k;
        uint32_t cp, min;
        if ((c & 0xE0) == 0xC0) { k = 1; cp = c & 0x1F; min = 0x80; }
        else if ((c & 0xF0) == 0xE0) { k = 2; cp = c & 0x0F; min = 0x800; }
        else if ((c & 0xF8) == 0xF0) { k = 3; cp = c & 0x07; min = 0x10000; }
        else return i;
        if (n - i <= k) return i;
        for (size_t j = 1; j <= k; ++j) {
            if ((u[i + j] & 0xC0) != 0x80) return i;
            cp = (cp << 6) | (u[i + j] & 0x3F);
        }
        if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
            return i;
        i += k + 1;
    }
    return n;
}

/* The code point at s[i] (valid UTF-8) and its byte length. */
static uint32_t dec(const unsigned char *s, size_t i, size_t *len)
{
    unsigned c = s[i];
    if (c < 0x80) { *len = 1; return c; }
    if ((c & 0xE0) == 0xC0) {
        *len = 2;
        return ((c & 0x1Fu) << 6) | (s[i + 1] & 0x3Fu);
    }
    if ((c & 0xF0) == 0xE0) {
        *len = 3;
        return ((c & 0x0Fu) << 12) | ((s[i + 1] & 0x3Fu) << 6) |
               (s[i + 2] & 0x3Fu);
    }
    *len = 4;
    return ((c & 0x07u) << 18) | ((s[i + 1] & 0x3Fu) << 12) |
           ((s[i + 2] & 0x3Fu) << 6) | (s[i + 3] & 0x3Fu);
}

/* The term being built: bytes beyond the buffer only count (the term is
 * then over the limit and dropped anyway). */
struct term {
    char b[XG_TEXT_TSV_MAX_TERM + 8];
    size_t n;
};

static void put(struct term *t, uint32_t cp)
{
    char e[4];
    size_t k;
    if (cp < 0x80) { e[0] = (char)cp; k = 1; }
    else if (cp < 0x800) {
        e[0] = (char)(0xC0 | (cp >> 6)); e[1] = (char)(0x80 | (cp & 0x3F)); k = 2;
    } else if (cp < 0x10000) {
        e[0] = (char)(0xE0 | (cp >> 12)); e[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        e[2] = (char)(0x80 | (cp & 0x3F)); k = 3;
    } else {
        e[0] = (char)(0xF0 | (cp >> 18)); e[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
        e[2] = (char)(0x80 | ((cp >> 6) & 0x3F)); e[3] = (char)(0x80 | (cp & 0x3F));
        k = 4;
    }
    if (t->n + k <= sizeof t->b) memcpy(t->b + t->n, e, k);
    t->n += k;
}

#define IGNORE 0xFFFFFFFFu
#define IS_UPPER(c) ((c) >= 'A' && (c) <= 'Z')

/* An infix between two word characters: kept (its code point), dropped
 * from the term but joining (IGNORE: zero-width spaces), or 0: a break. */
static uint32_t infix(uint32_t cp, int digits)
{
    if (cp >= 0x200B && (cp <= 0x200D || cp == 0x2060 || cp == 0xFEFF))
        return IGNORE;
    if (digits) {
        switch (cp) {
        case ',': case '.': case ';': case 0x037E: case 0x0589: case 0x060D:
        case 0x07F8: case 0x2044: case 0xFE10: case 0xFE13: case 0xFE14:
            return cp;
        }
        return 0;
    }
    if (cp == '\'' || cp == '&' || cp == 0xB7 || cp == 0x5F4 || cp == 0x2027)
        return cp;
    if (cp == 0x2019 || cp == 0x201B) return '\'';
    return 0;
}

int xg_text_tokenize(const char *text, size_t n, xg_text_emit_fn emit, void *ctx)
{
    const unsigned char *s = (const unsigned char *)text;
    size_t i = 0, l;
    int dg;
    struct term t;
    for (;;) {
        uint32_t cp, ch;
        for (;;) {                          /* to the next word character */
            if (i >= n) return 0;
            cp = dec(s, i, &l);
            if ((ch = xg_text_wordchar(cp, &dg))) break;
            i += l;
        }
        t.n = 0;
        if (IS_UPPER(cp)) {                 /* initials: P.T.O. -> pto */
            size_t p = i;
            do {
                put(&t, s[p++] + 32u);
            } while (p < n && s[p] == '.' && ++p < n && IS_UPPER(s[p]));
            if (t.n > 1) {
                size_t pl;
                if (p == n || !xg_text_wordchar(dec(s, p, &pl), &dg)) {
                    i = p;
                    goto end_of_term;
                }
            }
            t.n = 0;
        }
        for (;;) {
            int prev_digit;
            do {
                put(&t, ch);
                xg_text_wordchar(ch, &prev_digit);
                i += l;
                if (i >= n) goto end_of_term;
                cp = dec(s, i, &l);
                ch = xg_text_wordchar(cp, &dg);
            } while (ch);
            size_t next = i + l, nl;
            if (next >= n) break;
            uint32_t ncp = dec(s, next, &nl);
            int next_digit;
            uint32_t nch = xg_text_wordchar(ncp, &next_digit);
            if (!nch) break;
            uint32_t in = infix(cp, prev_digit && next_digit);
            if (!in) break;
            if (in != IGNORE) put(&t, in);
            ch = nch;
            i = next;
            l = nl;
        }
        {                                   /* suffixes: c++, c# */
            size_t keep = t.n;
            unsigned count = 0;
            for (;;) {
                cp = dec(s, i, &l);
                if (cp != '+' && cp != '#') break;
                if (++count > 3) { t.n = keep; break; }
                put(&t, cp);
                i += l;
                if (i >= n) goto end_of_term;
            }
            if (xg_text_wordchar(dec(s, i, &l), &dg)) t.n = keep;
        }
end_of_term:
        if (t.n <= XG_TEXT_TSV_MAX_TERM) {
            int rc = emit(ctx, t.b, t.n);
            if (rc) return rc;
        }
    }
}
