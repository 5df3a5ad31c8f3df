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
/* The query engine's finish kernel (finish.cu): a thread per candidate,
 * XG_FINISH_SPLIT blocks of XG_FINISH_THREADS per query (a real-text OR
 * query has about 160 candidates), at least XG_FINISH_MIN_BLOCKS (one an
 * SM of the H100) for a batch of few queries. */
#define XG_FINISH_THREADS 128
#define XG_FINISH_SPLIT 2
#define XG_FINISH_MIN_BLOCKS 132
/* A wdf looked up (a skip search, then a block decoded for one document)
 * against a block gathered, in the finish's choice (finish.h). */
#define XG_FINISH_LOOKUP_COST 2u
/* The lookup's blocks against the rescoring's: a warp a candidate and
 * list, each a chain of dependent loads, wants more warps in flight; but
 * each block first weighs every query's choice. */
#define XG_FINISH_LOOKUP_SPREAD 2u
/* The least blocks a batch of few queries spreads the selection's passes
 * over, so that one query still fills the GPU: one query's 322K documents
 * in 10 blocks left most of an H100 idle, and 16 queries in 256 blocks
 * left each thread 80 loads in a row. */
#define XG_SMALL_BATCH_BLOCKS 1024
/* The query engine's batches of at least this many queries take turns
 * on the device (engine_cuda.c); smaller ones, which leave most of it
 * idle, run beside the other slot's. */
#define XG_TURN_MIN_QUERIES 64
/* A query of one term intersects (its list alone) where the list holds
 * at most 1 / XG_ONE_TERM_SHARE of the documents, and takes the dense
 * path above that (batch.c): per document the dense path writes and reads
 * a 4-byte row cell three to six times, the intersection writes and reads
 * 16 bytes per posting up to seven. */
#define XG_ONE_TERM_SHARE 8
/* ... but in a batch of fewer queries than this where another query takes
 * the dense path and none intersects otherwise, it takes the dense path
 * too (batch.c). */
#define XG_ONE_TERM_DENSE_BELOW 64
/* In a batch of at least XG_SPARSE_MIN_QUERIES queries, an OR from
 * impacts whose lists hold at most 1 / XG_SPARSE_SHARE as many postings
 * as there are documents has its touched documents listed
 * (xg_dquery.sparse): the selection's passes then read that list, a
 * random 4-byte read a document, instead of the whole row.  On the real
 * text (322,045 documents) 59% of the TREC ORs on impacts qualify, and
 * batches of 256 took 14% less kernel time; batches of 1 and 16, whose
 * passes cost what a launch costs whatever they read, took 3% more
 * (docs/benchmarks.md, "Touched lists"). */
#define XG_SPARSE_SHARE 16
#define XG_SPARSE_MIN_QUERIES 64
/* The host finish (batch.c): a batch of at least twice this many
 * candidates is put in MSet order on several host threads, a share per
 * 2^XG_FINISH_SHARE_SHIFT of them (a top-1000 OR query has about 4,000). */
#define XG_FINISH_SHARE_SHIFT 15
#define XG_FINISH_SHARE_CANDS (1u << XG_FINISH_SHARE_SHIFT)
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
