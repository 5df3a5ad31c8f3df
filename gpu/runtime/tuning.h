/** @file tuning.h
 *  @brief The tuning constants of every product in one place: kernel
 *         block sizes, the query engine's batch work, the device memory
 *         budget's default.  Included by C host code and by the .cu
 *         kernels (plain macros only).  The run-time switches that
 *         measure or test a choice are knobs.h's.
 */
#ifndef XG_TUNING_H
#define XG_TUNING_H

/* Threads per block of the kernels (kern_util.cuh's THREADS): 256 keeps
 * 8 blocks of 8 warps resident per SM on the H100. */
#define XG_THREADS_PER_BLOCK 256
/* The query engine's finish kernel (finish.cu): a warp per candidate,
 * XG_FINISH_SPLIT blocks of XG_FINISH_THREADS per query (a real-text OR
 * query has about 160 candidates: 16 blocks of 4 warps give each warp two
 * or three). */
#define XG_FINISH_THREADS 128
#define XG_FINISH_SPLIT 16
/* The least blocks a batch of few queries spreads a pass over (the
 * selection's and the finish's), so that one query still fills the GPU:
 * one query's 322K documents in 10 blocks left most of an H100 idle, and
 * 16 queries in 256 blocks left each thread of the selection 80 loads in
 * a row and each warp of the finish three candidates' lookups. */
#define XG_SMALL_BATCH_BLOCKS 1024
/* The query engine's batches of at least this many queries take turns
 * on the device (engine_cuda.c); smaller ones, which leave most of it
 * idle, run beside the other slot's. */
#define XG_TURN_MIN_QUERIES 64
/* Warps per block of the list decoders (decode.cu, accumulate.cu): one
 * warp per 128-posting block. */
#define XG_DECODE_WARPS 8

/* The query engine's default batch work: a batch closes once its
 * queries' postings reach this many (xg_engine_opts.batch_work;
 * plugin/context.c's default too). */
#define XG_BATCH_WORK_DEFAULT (1ull << 27)

/* Without a --device-memory budget an engine may take this share of the
 * device's free memory at open (device.h's xg_device_budget). */
#define XG_DEVICE_BUDGET_NUM 9
#define XG_DEVICE_BUDGET_DEN 10

#endif
