/** @file knobs.c
 *  @brief The environment switches (knobs.h), all read together at the
 *         first use of any, under a lock, then kept.
 */
#include "knobs.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

struct knobs {
    int wt_no_place, wt_no_ahead, wt_no_prefault, wt_no_stream;
    int gpu_twins, export_timing;
    double impact_slack;
    uint64_t gdict_mask;
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static _Atomic int loaded;
static struct knobs k;

/* "1" as the first character: on. */
static int flag(const char *name)
{
    const char *e = getenv(name);
    return e && e[0] == '1';
}

static void load(void)
{
    struct knobs n;
    n.wt_no_place = flag("XG_WT_NO_PLACE");
    n.wt_no_ahead = flag("XG_WT_NO_AHEAD");
    n.wt_no_prefault = flag("XG_WT_NO_PREFAULT");
    n.wt_no_stream = flag("XG_WT_NO_STREAM");
    const char *twins = getenv("XG_GPU_TWINS");
    n.gpu_twins = twins && !strcmp(twins, "1");
    n.export_timing = getenv("XG_EXPORT_TIMING") != NULL;
    const char *slack = getenv("XG_TEST_IMPACT_SLACK");
    n.impact_slack = slack && atof(slack) >= 1 ? atof(slack) : 1.0;
    const char *m = getenv("XG_TEST_GDICT_MASK");
    n.gdict_mask = m && *m ? strtoull(m, NULL, 16) : UINT64_MAX;
    k = n;
}

static const struct knobs *get(void)
{
    if (!atomic_load_explicit(&loaded, memory_order_acquire)) {
        pthread_mutex_lock(&mu);
        if (!atomic_load_explicit(&loaded, memory_order_relaxed)) {
            load();
            atomic_store_explicit(&loaded, 1, memory_order_release);
        }
        pthread_mutex_unlock(&mu);
    }
    return &k;
}

void xg_knobs_reload(void)
{
    pthread_mutex_lock(&mu);
    atomic_store_explicit(&loaded, 0, memory_order_release);
    pthread_mutex_unlock(&mu);
}

int xg_knob_wt_no_place(void) { return get()->wt_no_place; }
int xg_knob_wt_no_ahead(void) { return get()->wt_no_ahead; }
int xg_knob_wt_no_prefault(void) { return get()->wt_no_prefault; }
int xg_knob_wt_no_stream(void) { return get()->wt_no_stream; }
int xg_knob_gpu_twins(void) { return get()->gpu_twins; }
int xg_knob_export_timing(void) { return get()->export_timing; }
double xg_knob_test_impact_slack(void) { return get()->impact_slack; }
uint64_t xg_knob_test_gdict_mask(void) { return get()->gdict_mask; }
