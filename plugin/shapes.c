/** @file shapes.c
 *  @brief The planner's per-shape shares (see shapes.h).
 */
#include "shapes.h"

int xg_shape_of(int is_term, int is_and, int is_or, uint32_t n, int flat)
{
    if (is_term) return 0;
    if ((!is_and && !is_or) || n == 0) return -1;
    const uint32_t size = n < 8 ? n : 8;
    return 1 + (is_and ? 0 : 16) + (int)(size - 1) * 2 + (flat != 0);
}

int xg_shapes_skip(struct xg_shapes *sh, int shape)
{
    static _Thread_local unsigned tick;
    if (shape < 0 || shape >= XG_SHAPES) return 0;
    const uint32_t planned = atomic_load_explicit(&sh->s[shape].planned,
                                                  memory_order_relaxed);
    const uint32_t engine = atomic_load_explicit(&sh->s[shape].engine,
                                                 memory_order_relaxed);
    if (planned < XG_SHAPE_MIN ||
        (uint64_t)engine * XG_SHAPE_RATIO >= planned ||
        ++tick % XG_SHAPE_SAMPLE == 0)
        return 0;
    atomic_fetch_add_explicit(&sh->skipped, 1, memory_order_relaxed);
    return 1;
}

void xg_shapes_note(struct xg_shapes *sh, int shape, int engine)
{
    if (shape < 0 || shape >= XG_SHAPES) return;
    const uint32_t planned = atomic_fetch_add_explicit(
        &sh->s[shape].planned, 1, memory_order_relaxed) + 1;
    if (engine)
        atomic_fetch_add_explicit(&sh->s[shape].engine, 1,
                                  memory_order_relaxed);
    if (planned >= XG_SHAPE_WINDOW) {
        /* Halve both: racing notes may be lost, not the share. */
        atomic_store_explicit(&sh->s[shape].planned, planned / 2,
                              memory_order_relaxed);
        atomic_store_explicit(
            &sh->s[shape].engine,
            atomic_load_explicit(&sh->s[shape].engine,
                                 memory_order_relaxed) / 2,
            memory_order_relaxed);
    }
}
