/** @file knobs.c
 *  @brief The environment switches (knobs.h), read at each call: a test
 *         that sets one within its process sees it at the next use.
 */
#include "knobs.h"

#include <stdlib.h>
#include <string.h>

/* "1" as the first character: on. */
static int flag(const char *name)
{
    const char *e = getenv(name);
    return e && e[0] == '1';
}

int xg_knob_wt_no_place(void) { return flag("XG_WT_NO_PLACE"); }
int xg_knob_wt_no_ahead(void) { return flag("XG_WT_NO_AHEAD"); }
int xg_knob_wt_no_prefault(void) { return flag("XG_WT_NO_PREFAULT"); }
int xg_knob_wt_no_stream(void) { return flag("XG_WT_NO_STREAM"); }

int xg_knob_gpu_twins(void)
{
    const char *e = getenv("XG_GPU_TWINS");
    return e && !strcmp(e, "1");
}

int xg_knob_no_pressure(void)
{
    const char *e = getenv("XG_NO_PRESSURE");
    return e && !strcmp(e, "1");
}

int xg_knob_no_cpu_or(void) { return flag("XG_NO_CPU_OR"); }

int xg_knob_serve_no_ahead(void) { return flag("XG_SERVE_NO_AHEAD"); }

int xg_knob_export_timing(void) { return getenv("XG_EXPORT_TIMING") != NULL; }

int xg_knob_one_slot(void) { return flag("XG_ONE_SLOT"); }

unsigned xg_knob_slots(void)
{
    const char *e = getenv("XG_SLOTS");
    const long n = e && *e ? strtol(e, NULL, 10) : 0;
    return n >= 1 && n <= XG_SLOTS_MAX ? (unsigned)n : 0;
}
unsigned xg_knob_finish_wdfs(void)
{
    const char *e = getenv("XG_FINISH_WDFS");
    if (e && !strcmp(e, "gather")) return XG_FINISH_GATHER;
    if (e && !strcmp(e, "lookup")) return XG_FINISH_LOOKUP;
    return XG_FINISH_BY_COST;
}
unsigned xg_knob_dispatch_inline(void)
{
    const char *e = getenv("XG_DISPATCH_INLINE");
    if (e && e[0] == '0') return XG_DISPATCH_INLINE_OFF;
    if (e && e[0] == '2') return XG_DISPATCH_INLINE_FREE_LANE;
    return XG_DISPATCH_INLINE_IDLE;
}

int xg_knob_slots_overlap(void) { return flag("XG_SLOTS_OVERLAP"); }

double xg_knob_test_impact_slack(void)
{
    const char *e = getenv("XG_TEST_IMPACT_SLACK");
    return e && atof(e) >= 1 ? atof(e) : 1.0;
}

int xg_knob_test_sparse(void) { return flag("XG_TEST_SPARSE"); }

uint64_t xg_knob_test_gdict_mask(void)
{
    const char *e = getenv("XG_TEST_GDICT_MASK");
    return e && *e ? strtoull(e, NULL, 16) : UINT64_MAX;
}
