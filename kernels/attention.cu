// FlashAttention-2-style forward pass: O = softmax(Q·Kᵀ / √D) · V, one pass
// over K/V with an online softmax, fp16 in and out, fp32 accumulation.
// Layout [B, H, S, D]. Compiled at run time by NVRTC; the toggles are -D
// defines (seeds 000-004, then issue 9):
//   USE_WMMA      Q·Kᵀ on tensor cores; Q is staged in shared memory because
//                 WMMA fragments must load from shared or global memory, never
//                 from a register array (seed 000: those spilled to local
//                 memory and failed the sanitizer).
//   USE_WMMA_PV   P·V on tensor cores; the unnormalized P is staged in shared
//                 memory as half. O stays in WMMA accumulators: their row
//                 mapping is opaque, so a row can only be rescaled through
//                 shared memory, and that is done only when a row's maximum
//                 grows by more than 2^RESCALE_LOG2 (seed 002 rescaled every
//                 tile).
//   USE_CP_ASYNC  K/V tiles arrive by 16-byte cp.async, STAGES deep, with
//                 commit/wait groups (seeds 001, 003: 8-byte cp.async is
//                 refused on sm_89, so only 16-byte copies are issued).
//   USE_MMA       a separate tensor-core path (issue 9): mma.sync m16n8k16
//                 with ldmatrix, whose fragment layouts are specified, so S,
//                 P and O never leave registers. Replaces USE_WMMA/USE_WMMA_PV.
//   USE_WGMMA     a tile option of the mma path (sm_90a): Q·Kᵀ and P·V by
//                 wgmma, one instruction per 16-deep step for a warpgroup's
//                 64 rows, B (K or V) read straight from shared memory in the
//                 128-byte-swizzled layout the cp.async loads write; Q and P
//                 stay A operands in registers, S and O accumulators keep the
//                 mma.sync layout, so the softmax is shared.
//   Q_SMEM        a tile option of the wgmma path (issue 21): Q·Kᵀ reads Q
//                 as A straight from shared memory (swizzled like K) instead
//                 of from registers, which frees HEAD_DIM / 4 registers per
//                 thread: what three stages of 128 keys need at D = 128.
//   WS            a tile option of three-stage Q_SMEM tiles (issue 21): one
//                 more warpgroup, a producer, issues every load; stages are handed
//                 over by mbarriers (full: landed, empty: released), so the
//                 consumer warpgroups never meet at a block barrier and drift
//                 apart, one's softmax under the other's wgmma.
//   TMA           a tile option of WS tiles (issue 21): one producer thread
//                 loads each Q, K and V tile with the Tensor Memory
//                 Accelerator (cp.async.bulk.tensor, one instruction per 64
//                 columns, the 128-byte swizzle done by the copy engine),
//                 completion counted in bytes on the stage's full mbarrier;
//                 the tensor maps come from the host in attn_tma.
//   PINGPONG      a tile option of WS tiles with two or three consumer
//                 warpgroups (issue 21): they take turns at issuing their
//                 GEMMs (a named barrier each, round robin), and each runs
//                 its softmax while the others' GEMMs run; within a
//                 warpgroup Q·Kᵀ of the next tile and P·V of this one are
//                 issued together, the next softmax running under P·V.
//                 Three (192-row tiles at D = 64, as FlashAttention-3 runs
//                 there) get 160 registers each.
//   STAGGER       a tile option of two-stage split tiles (issue 21, step 36):
//                 after the first stage (Q and tile 0, every thread, one
//                 block barrier) each group loads its own rows of the next
//                 stage and waits at its own named barrier, and group k
//                 issues its first Q·Kᵀ only once group k - 1's has landed,
//                 so one group's softmax runs under the other's GEMMs
//                 instead of all groups meeting at block barriers twice a
//                 tile. The merge then gets shared memory of its own: a
//                 group may finish while another still reads its tiles.
//   PERSIST       a tile option of TMA tiles (issue 21): one CTA per SM
//                 (the grid is min(SMs, row blocks)) walks the row blocks of
//                 every head, so the producer loads the next block's Q and
//                 K/V while the consumers finish and store this one; B·H
//                 comes from the host in attn_heads.
//   Q_REGS        a tile option of PERSIST tiles (issue 21, step 32): each
//                 consumer copies its Q rows from the swizzled tile into
//                 registers (ldmatrix) once the Q has landed and Q·Kᵀ takes
//                 A from them, so the Q buffer is free for the next row
//                 block's Q at the start of this one, not at its end: a
//                 second Q buffer without its shared memory (D = 128).
//   EXP_FIRST     a tile option of ping-pong tiles with two consumer
//                 warpgroups (issue 21, step 39): each tile's exponentials
//                 are taken against the running maximum as it stands,
//                 before that tile's maximum is known; the row sums then
//                 bound every P, and only when one passes 2^7 in the
//                 warpgroup is S computed again and the maximum taken. The
//                 same P, bit for bit, with the maximum's tree and shuffles
//                 gone from the critical path of most tiles.
// Each warp owns 16 query rows (WMMA's M); the mma path also allows 32, and
// splits each K/V tile over SPLIT groups of warps (merged at the end), so
// WARPS = BLOCK_M / ROWS_PER_WARP * SPLIT.

#ifndef HEAD_DIM
#define HEAD_DIM 64
#endif
#ifndef BLOCK_M
#define BLOCK_M 64
#endif
#ifndef BLOCK_N
#define BLOCK_N 64
#endif
#ifndef STAGES
#define STAGES 2
#endif
#ifndef SPLIT
#define SPLIT 1
#endif
#ifndef WARPS
#define WARPS (BLOCK_M / 16 * SPLIT)
#endif
// Minimum resident blocks per SM that ptxas plans registers for. Without it
// ptxas picked 72-96 registers and spilled in several variants; with it each
// thread may use up to 65536 / (THREADS * MIN_BLOCKS) registers.
#ifndef MIN_BLOCKS
#define MIN_BLOCKS 1
#endif
#ifndef USE_WMMA
#define USE_WMMA 0
#endif
#ifndef USE_WMMA_PV
#define USE_WMMA_PV 0
#endif
#ifndef USE_CP_ASYNC
#define USE_CP_ASYNC 0
#endif
#ifndef USE_MMA
#define USE_MMA 0
#endif
#ifndef USE_WGMMA
#define USE_WGMMA 0
#endif
#ifndef Q_SMEM
#define Q_SMEM 0
#endif
#ifndef WS
#define WS 0
#endif
#ifndef TMA
#define TMA 0
#endif
#ifndef PINGPONG
#define PINGPONG 0
#endif
#ifndef PERSIST
#define PERSIST 0
#endif
#ifndef Q_REGS
#define Q_REGS 0
#endif
#ifndef STAGGER
#define STAGGER 0
#endif
#ifndef EXP_FIRST
#define EXP_FIRST 0
#endif
// Test-only: one store far out of bounds, so the GPU reports an illegal
// address (attnscope's fault-injection variant, `+fault`).
#ifndef INJECT_FAULT
#define INJECT_FAULT 0
#endif
// Test-only mutations that prove the correctness oracle has teeth
// (`selftest --mutations`): MUTATE_RESCALE leaves O unscaled when a row's
// running maximum rises; MUTATE_MERGE forgets to rescale the first group's
// O when split groups merge; MUTATE_EXP_FIRST makes an EXP_FIRST tile keep
// its exponentials whatever the row sums say. Localized errors a pooled
// bound would dilute (issue 37), each 1% where it says so: MUTATE_ROW one
// query row (S / 2 of head 0); MUTATE_TILE the last 64-row tile of every
// head; MUTATE_LAST_HEAD the last head (b·H + h = B·H - 1); MUTATE_LAST_BATCH
// every head of the last batch (the grid's z, so not PERSIST); MUTATE_COLUMN
// writes column D - 2's value into column D - 1; MUTATE_CAUSAL lets each row
// see one key past the diagonal; MUTATE_NORM drops the final 1/l. With all
// of them 0 the macros below expand to the expressions they wrap, so the
// shipped builds compile to the same code as before.
#ifndef MUTATE_RESCALE
#define MUTATE_RESCALE 0
#endif
#ifndef MUTATE_MERGE
#define MUTATE_MERGE 0
#endif
#ifndef MUTATE_EXP_FIRST
#define MUTATE_EXP_FIRST 0
#endif
#ifndef MUTATE_ROW
#define MUTATE_ROW 0
#endif
#ifndef MUTATE_TILE
#define MUTATE_TILE 0
#endif
#ifndef MUTATE_LAST_HEAD
#define MUTATE_LAST_HEAD 0
#endif
#ifndef MUTATE_LAST_BATCH
#define MUTATE_LAST_BATCH 0
#endif
#ifndef MUTATE_COLUMN
#define MUTATE_COLUMN 0
#endif
#ifndef MUTATE_CAUSAL
#define MUTATE_CAUSAL 0
#endif
#ifndef MUTATE_NORM
#define MUTATE_NORM 0
#endif

#include <cuda_fp16.h>
#ifndef INFINITY
#define INFINITY __int_as_float(0x7f800000)
#endif
#if USE_WMMA || USE_WMMA_PV
#include <mma.h>
using namespace nvcuda;
#endif

static_assert(BLOCK_N % 32 == 0 && BLOCK_N <= 128, "BLOCK_N must be 32, 64, 96 or 128");
static_assert(HEAD_DIM == 64 || HEAD_DIM == 128, "HEAD_DIM must be 64 or 128");
static_assert(STAGES >= 1 && STAGES <= 3, "STAGES must be 1, 2 or 3");
static_assert(!(USE_MMA && (USE_WMMA || USE_WMMA_PV)), "USE_MMA replaces USE_WMMA and USE_WMMA_PV");
static_assert(SPLIT >= 1 && WARPS % SPLIT == 0, "WARPS must be a multiple of SPLIT");
#if USE_MMA
#define ROWS_PER_WARP (BLOCK_M * SPLIT / WARPS)
static_assert(BLOCK_M * SPLIT % WARPS == 0 && (ROWS_PER_WARP == 16 || ROWS_PER_WARP == 32),
              "the mma path gives each warp 16 or 32 query rows: BLOCK_M * SPLIT / WARPS must be 16 or 32");
#else
#define ROWS_PER_WARP 16
static_assert(SPLIT == 1, "only the mma path splits K/V tiles over warps");
static_assert(WARPS * 16 == BLOCK_M, "each warp owns 16 query rows: WARPS must be BLOCK_M / 16");
#endif

#if USE_WGMMA
static_assert(USE_MMA, "USE_WGMMA is a tile option of the mma path");
static_assert(ROWS_PER_WARP == 16 && (WARPS / SPLIT) % 4 == 0,
              "a wgmma warpgroup is 4 warps of 16 rows: WARPS / SPLIT must be a multiple of 4");
#endif
static_assert(!Q_SMEM || USE_WGMMA, "Q_SMEM is a tile option of the wgmma path");
static_assert(!WS || (Q_SMEM && SPLIT == 1 && USE_CP_ASYNC && STAGES == 3),
              "WS (producer warpgroup) needs a three-stage Q_SMEM wgmma tile without a split");
static_assert(!TMA || WS, "TMA loads are issued by the producer warpgroup (WS)");
static_assert(!PINGPONG || (WS && (WARPS == 8 || WARPS == 12)),
              "PINGPONG needs a WS tile with two or three consumer warpgroups");
static_assert(!(WS && WARPS == 12) || PINGPONG, "three consumer warpgroups fit 160 registers only in the ping-pong loop");
static_assert(!PERSIST || TMA, "PERSIST (persistent CTAs) is a tile option of TMA tiles");
static_assert(!Q_REGS || PERSIST, "Q_REGS (Q copied to registers) is a tile option of PERSIST tiles");
// Named barriers 1 to SPLIT (0 is the block's) and SPLIT - 1 mbarriers.
static_assert(!STAGGER || (SPLIT > 1 && SPLIT <= 8 && USE_CP_ASYNC && STAGES == 2 && !WS),
              "STAGGER (split groups apart) is a tile option of two-stage tiles split 2 to 8 ways, with cp.async");
static_assert(!(MUTATE_LAST_BATCH && PERSIST), "MUTATE_LAST_BATCH reads the batch from the grid's z: not a PERSIST tile");
// The planted output bugs, as a row's 1/l. `heads`: B·H.
#if MUTATE_ROW || MUTATE_TILE || MUTATE_LAST_HEAD || MUTATE_LAST_BATCH || MUTATE_NORM
__device__ __forceinline__ float planted_inv(float inv, int row, int bh, int heads, int S) {
    const bool off = (MUTATE_ROW && bh == 0 && row == S / 2) || (MUTATE_TILE && row >= (S - 1) / 64 * 64) ||
                     (MUTATE_LAST_HEAD && bh == heads - 1) || (MUTATE_LAST_BATCH && blockIdx.z == gridDim.z - 1);
    return MUTATE_NORM ? 1.f : off ? inv * 1.01f : inv;
}
#define PLANT_INV(inv, row, bh, S) planted_inv(inv, row, bh, HEADS_TOTAL, S)
#else
#define PLANT_INV(inv, row, bh, S) (inv)
#endif
#if PERSIST
#define HEADS_TOTAL attn_heads
#else
#define HEADS_TOTAL (int)(gridDim.y * gridDim.z)
#endif
// An output value, or with MUTATE_COLUMN its left neighbour's in column D - 1.
#if MUTATE_COLUMN
#define PLANT_COL(value, left, col) ((col) == HEAD_DIM - 1 ? (left) : (value))
#else
#define PLANT_COL(value, left, col) (value)
#endif
// Whether a key lies past a query row's diagonal (causal).
#if MUTATE_CAUSAL
#define PAST_DIAGONAL(key, row) ((key) > (row) + 1)
#else
#define PAST_DIAGONAL(key, row) ((key) > (row))
#endif
// The softmax's reductions for wgmma tiles (docs/perf-log.md, steps 19 and
// 29): row sums on the FMA pipe instead of a chain of mma.syncs that P·V
// waits behind, the row maximum as a tree. Not for tiles that read Q from
// shared memory at D = 64: there two warpgroups' softmax fills the issue
// slots, the FADDs cost more than they save and the tree cost 128x128s2w8gq
// its second CTA per SM. EXP_FIRST reads the FADD sums at every D.
#define ROWSUM_FADD (USE_WGMMA && (!Q_SMEM || HEAD_DIM >= 128 || EXP_FIRST))
// WARPS counts the consumers; the producer warpgroup (WS) comes after them.
#define CONSUMER_THREADS (WARPS * 32)
// A producer warpgroup: registers are handed out per warpgroup (setmaxnreg).
#define THREADS (CONSUMER_THREADS + (WS ? 128 : 0))
// Registers per thread after the hand-over; a TMA producer is one thread that
// needs few. A warpgroup asking for more than the register file has left
// would wait forever: three consumer warpgroups (TMA only) get 160 each.
#define PRODUCER_REGS (TMA ? 24 : 40)
#define CONSUMER_REGS (WARPS == 12 ? 160 : TMA ? 240 : 232)
static_assert(!WS || CONSUMER_THREADS * CONSUMER_REGS + 128 * PRODUCER_REGS <= 65536,
              "WS tiles have one or two consumer warpgroups (4 or 8 warps), or three with TMA (12)");
#define FULL_MASK 0xffffffffu
// K/V rows one pipeline stage holds: a sub-tile of BLOCK_N rows per group.
#define KV_ROWS (BLOCK_N * SPLIT)
// Padding keeps 16-byte row alignment (cp.async, uint4, ldmatrix) and 32-byte
// WMMA fragment alignment, and shifts consecutive rows by 4 banks, so eight
// 16-byte row reads (ldmatrix, a quarter warp of uint4) hit 32 distinct banks.
#define LDH (HEAD_DIM + 8)   // half row stride of Q, K, V tiles
#define LDS (BLOCK_N + 4)    // float row stride of the score tile
#define LDP (BLOCK_N + 8)    // half row stride of the P tile
#define LDO (HEAD_DIM + 4)   // float row stride of the O tile
#if USE_CP_ASYNC
#define KV_STAGES STAGES
#else
#define KV_STAGES 1
#endif

// Shared-memory carve-up, in bytes; every region starts 128-byte aligned.
#define ALIGN128(x) (((x) + 127) / 128 * 128)
#define ALIGN1024(x) (((x) + 1023) / 1024 * 1024)
#if USE_WGMMA
// K/V tiles for wgmma: unpadded 128-byte rows in column blocks of 64 halves
// (one per 64 of D, KV_ROWS rows each), the 16-byte chunk c of row r stored
// at chunk c ^ (r % 8). That is wgmma's 128-byte swizzle, which the hardware
// undoes from address bits, so every 8-row block starts 1024-byte aligned.
#define KV_SWIZZLE 1
#define KV_ROW_HALVES 64
#define KV_TILE_HALVES (KV_ROWS * HEAD_DIM)
// Q read by wgmma from shared memory is stored like K (swizzled, unpadded).
// Persistent tiles at D = 64 load the next row block's Q into a second buffer
// while this block runs (docs/perf-log.md, step 31); with one buffer the next
// Q can only start once the last Q·Kᵀ of this block has landed. At D = 128
// three stages leave no room for it.
#define Q_BUFS (PERSIST && HEAD_DIM == 64 ? 2 : 1)
#define SQ_TILE_BYTES ALIGN1024(BLOCK_M * (Q_SMEM ? HEAD_DIM : LDH) * 2)
#define SQ_BYTES (SQ_TILE_BYTES * Q_BUFS)
#define SKV_BYTES ALIGN1024(KV_STAGES * KV_TILE_HALVES * 2)
#define SMEM_SLACK 1024  // the dynamic window is aligned up to 1024 at run time
#else
#define KV_SWIZZLE 0
#define KV_ROW_HALVES LDH
#define KV_TILE_HALVES (KV_ROWS * LDH)
#define Q_BUFS 1
#define SQ_TILE_BYTES ALIGN128(BLOCK_M * LDH * 2)
#define SQ_BYTES SQ_TILE_BYTES
#define SKV_BYTES ALIGN128(KV_STAGES * KV_TILE_HALVES * 2)
#define SMEM_SLACK 0
#endif
#if USE_MMA
// The split groups' partial results are merged through shared memory that
// the K/V tiles no longer need: per warp, each lane's O, m and l registers.
#define MERGE_REGS (ROWS_PER_WARP / 16 * (HEAD_DIM / 8 * 4 + 4))
#define MERGE_BYTES ((SPLIT - 1) * (WARPS / SPLIT) * 32 * MERGE_REGS * 4)
#define TILE_BYTES (SQ_BYTES + 2 * SKV_BYTES)
// WS: a full and an empty mbarrier per stage, then a pair per Q buffer, after
// the tiles.
#define BAR_BYTES (WS ? (Q_BUFS == 2 ? 128 : 64) : 0)
// STAGGER: after the tiles, not over them, then the stagger's mbarriers.
#define MERGE_AT (STAGGER ? TILE_BYTES : 0)
#define STAGGER_BYTES (STAGGER ? 64 : 0)
#define SMEM_BYTES                                                                                             \
    ((STAGGER ? TILE_BYTES + MERGE_BYTES : TILE_BYTES > MERGE_BYTES ? TILE_BYTES : MERGE_BYTES) + STAGGER_BYTES + \
     BAR_BYTES + SMEM_SLACK)
#else
#define SS_BYTES ALIGN128(BLOCK_M * LDS * 4)
#if USE_WMMA_PV
#define SP_BYTES ALIGN128(BLOCK_M * LDP * 2)
#define SO_BYTES ALIGN128(BLOCK_M * LDO * 4)
#else
#define SP_BYTES 0
#define SO_BYTES 0
#endif
#define SMEM_BYTES (SQ_BYTES + 2 * SKV_BYTES + SS_BYTES + SP_BYTES + SO_BYTES)
#endif
// A row's running maximum is raised (and O rescaled) only past this many
// powers of two; until then P ≤ 2^8, well inside half's range.
#define RESCALE_LOG2 8.f

extern "C" __constant__ int attn_smem_bytes = SMEM_BYTES;
extern "C" __constant__ int attn_threads = THREADS;
extern "C" __constant__ int attn_block_m = BLOCK_M;
// The whole configuration, so every define set yields distinct PTX: NVRTC
// 13.0 on the GPU machine printed no PTXAS report for a PTX it had already
// assembled in the same process (single-stage variants equal the default).
extern "C" __constant__ int attn_config[16] = {HEAD_DIM, BLOCK_M, STAGES,  WARPS,  USE_WMMA, USE_WMMA_PV, USE_CP_ASYNC, USE_MMA,
                                               SPLIT,    USE_WGMMA, BLOCK_N, Q_SMEM, WS,       TMA,         PINGPONG, PERSIST};

__device__ __forceinline__ unsigned smem_addr(const void* p) {
    return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

// The 16-byte chunk cv of row r in a swizzled tile of ROWS rows (wgmma's
// 128-byte swizzle): column blocks of 64 halves, ROWS rows each, chunk
// c of row r stored at c ^ (r % 8).
template <int ROWS, typename H>
__device__ __forceinline__ H* swizzled(H* tile, int r, int cv) {
    return tile + (cv / 8) * ROWS * 64 + r * 64 + ((cv % 8) ^ (r % 8)) * 8;
}

// Copies rows [row0, row0 + ROWS) of one head's Q, K or V into a tile,
// zero-filling rows at or past S so partial tiles read zeros, never memory
// outside the tensor.
// The trip count is a compile-time constant so the loop unrolls into straight
// copies with constant offsets (a runtime-bounded loop cost ~15 instructions
// per 16 bytes on sm_90, a fifth of the mma path's instructions).
// Whole tiles (all but a ragged last one) take the first branch, where every
// address is the thread's base plus a constant: one instruction per 16 bytes.
// SWZ writes the wgmma layout (KV_SWIZZLE): a pass covers a multiple of 8
// rows, so a thread's swizzled chunk is the same on every pass.
// NT threads load (tid: this one's index among them); a swizzled tile's
// column blocks hold TILE_ROWS rows (a split group fills its BLOCK_N rows of
// a stage's KV_ROWS, from the stage's row key_off on).
template <int ROWS, bool SWZ = false, int NT = CONSUMER_THREADS, int TILE_ROWS = ROWS>
__device__ __forceinline__ void load_rows(half* tile, const half* __restrict__ src, int row0, int S,
                                          unsigned tid = threadIdx.x) {
    constexpr int VEC_PER_ROW = HEAD_DIM / 8;  // 16-byte vectors
    constexpr int VECS = ROWS * VEC_PER_ROW;
    // The consumers load (with WS the producer warpgroup has its own loader).
    constexpr int ROW_STEP = NT / VEC_PER_ROW;  // rows one pass of the block covers
    constexpr int LD = SWZ ? 64 : LDH;          // halves from one row to the next
    static_assert(NT % VEC_PER_ROW == 0, "a pass of the block covers whole rows");
    static_assert(!SWZ || ROW_STEP % 8 == 0, "a swizzled pass covers whole 8-row blocks");
    const int r0 = tid / VEC_PER_ROW;
    const int cv = tid % VEC_PER_ROW;
    const int c = cv * 8;
    const half* base = src + ((size_t)row0 + r0) * HEAD_DIM + c;
    half* sbase = SWZ ? swizzled<TILE_ROWS>(tile, r0, cv) : tile + r0 * LDH + c;
    if (row0 + ROWS <= S) {
#pragma unroll
        for (int j = 0; j < (VECS + NT - 1) / NT; ++j) {
            if (VECS % NT != 0 && r0 + j * ROW_STEP >= ROWS) break;
            const half* g = base + j * ROW_STEP * HEAD_DIM;
            half* s = sbase + j * ROW_STEP * LD;
#if USE_CP_ASYNC
            asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(smem_addr(s)), "l"(g));
#else
            *reinterpret_cast<uint4*>(s) = *reinterpret_cast<const uint4*>(g);
#endif
        }
        return;
    }
#pragma unroll
    for (int j = 0; j < (VECS + NT - 1) / NT; ++j) {
        const int r = r0 + j * ROW_STEP;
        if (VECS % NT != 0 && r >= ROWS) break;
        const bool valid = row0 + r < S;
        const half* g = valid ? base + j * ROW_STEP * HEAD_DIM : src;
        half* s = sbase + j * ROW_STEP * LD;
#if USE_CP_ASYNC
        // src-size 0 makes cp.async write 16 zero bytes and read nothing.
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_addr(s)), "l"(g),
                     "r"(valid ? 16 : 0));
#else
        *reinterpret_cast<uint4*>(s) = valid ? *reinterpret_cast<const uint4*>(g) : make_uint4(0, 0, 0, 0);
#endif
    }
}

__device__ __forceinline__ void cp_async_commit() {
#if USE_CP_ASYNC
    asm volatile("cp.async.commit_group;\n" ::);
#endif
}

template <int N>
__device__ __forceinline__ void cp_async_wait() {
#if USE_CP_ASYNC
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
#endif
}

__device__ __forceinline__ void load_kv(half* sK, half* sV, const half* __restrict__ Kh,
                                        const half* __restrict__ Vh, int t, int S) {
    const int stage = t % KV_STAGES;
    load_rows<KV_ROWS, KV_SWIZZLE>(sK + stage * KV_TILE_HALVES, Kh, t * KV_ROWS, S);
    load_rows<KV_ROWS, KV_SWIZZLE>(sV + stage * KV_TILE_HALVES, Vh, t * KV_ROWS, S);
}

// wgmma reads shared memory through the async proxy: what this thread's
// cp.async (or stores) wrote must be made visible to it before the barrier.
__device__ __forceinline__ void kv_visible_to_wgmma() {
#if USE_WGMMA
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
#endif
}

// With three stages, tile 1 also goes out before the loop (tile 0 goes with
// Q), one commit group per tile.
__device__ __forceinline__ void prefetch_kv(half* sK, half* sV, const half* __restrict__ Kh,
                                            const half* __restrict__ Vh, int n_tiles, int S) {
#if USE_CP_ASYNC && STAGES > 2
#pragma unroll
    for (int t = 1; t < STAGES - 1; ++t) {
        if (t < n_tiles) load_kv(sK, sV, Kh, Vh, t, S);
        cp_async_commit();
    }
#endif
}

// Makes K/V tile t resident in stage t % KV_STAGES; multi-buffered, it also
// starts tile t + STAGES - 1. The caller syncs the block after this and again
// before a stage is refilled.
__device__ __forceinline__ void fetch_kv(half* sK, half* sV, const half* __restrict__ Kh,
                                         const half* __restrict__ Vh, int t, int n_tiles, int S) {
#if USE_CP_ASYNC && STAGES >= 2
    if (t + STAGES - 1 < n_tiles) load_kv(sK, sV, Kh, Vh, t + STAGES - 1, S);
    // Committed even when empty, so STAGES - 1 groups always follow tile t's.
    cp_async_commit();
    cp_async_wait<STAGES - 1>();
#else
    // One stage: tile t replaces tile t-1 once every warp is done with it.
    if (t > 0) {
        load_kv(sK, sV, Kh, Vh, t, S);
        cp_async_commit();
    }
    cp_async_wait<0>();
#endif
    kv_visible_to_wgmma();
}

#if USE_MMA
// ---------------------------------------------------------------------------
// mma.sync path. Fragment layouts (PTX ISA, m16n8k16 f16): with g = lane / 4
// and q = lane % 4, an accumulator holds rows g and g + 8, columns 2q and
// 2q + 1; so a row's values live in the 4 lanes of a quad, and the S
// accumulators of two adjacent 8-key blocks are, packed to half, exactly the
// A fragment of P for the next mma. No shared-memory round trip for S or P.

#define MI (ROWS_PER_WARP / 16)  // 16-row m-tiles per warp
#define NB (BLOCK_N / 8)         // 8-key blocks of a sub-tile
#define DB (HEAD_DIM / 8)        // 8-column blocks of O
// Three stages let Q·Kᵀ of the next tile overlap this tile's softmax.
#define PIPELINE (USE_CP_ASYNC && STAGES == 3)

__device__ __forceinline__ void ldmatrix_x4(unsigned (&r)[4], const half* p) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(smem_addr(p)));
}

__device__ __forceinline__ void ldmatrix_x4_trans(unsigned (&r)[4], const half* p) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(smem_addr(p)));
}

__device__ __forceinline__ void mma_16816(float (&c)[4], const unsigned (&a)[4], unsigned b0, unsigned b1) {
    asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%0,%1,%2,%3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// Two floats as a half2 register, the first in the low half.
__device__ __forceinline__ unsigned pack_half2(float lo, float hi) {
    unsigned r;
    asm("cvt.rn.f16x2.f32 %0, %1, %2;\n" : "=r"(r) : "f"(hi), "f"(lo));
    return r;
}

// 2^x in one MUFU instruction; the scale is folded into the exponent's FMA.
__device__ __forceinline__ float fast_exp2(float x) {
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
    return y;
}

#if USE_WGMMA
// ---------------------------------------------------------------------------
// wgmma (sm_90a). A warpgroup's D += A·B for 64 rows × N columns × 16 deep:
// A from registers (per warp the m16n8k16 A layout: Q or P fragments as
// they are), B through a shared-memory descriptor, D in registers with the
// m16n8 accumulator layout per 8 columns (so s[0] and o[0] as they are).

// Start address, leading and stride byte offsets (in 16-byte units) and the
// 128-byte swizzle mode (bits 62-63 = 1).
__device__ __forceinline__ unsigned long long wgmma_desc(const half* p, unsigned lbo_bytes) {
    return (unsigned long long)((smem_addr(p) & 0x3FFFF) >> 4) | (unsigned long long)(lbo_bytes >> 4) << 16 |
           (unsigned long long)(1024 >> 4) << 32 | 1ull << 62;
}

__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
// Waits for every group this warpgroup committed, in flight ones included.
__device__ __forceinline__ void wgmma_commit_and_wait() {
    asm volatile("wgmma.commit_group.sync.aligned;\nwgmma.wait_group.sync.aligned 0;\n" ::: "memory");
}
// Waits until at most N of this warpgroup's committed groups are in flight.
template <int N>
__device__ __forceinline__ void wgmma_wait() {
    asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}

// D (N/2 floats per thread, N = 32, 64 or 128) += A·B, or = A·B when
// accumulate is 0; TRANS_B 0 for a K-major B (K's rows), 1 for MN-major (V's).
template <int TRANS_B>
__device__ __forceinline__ void wgmma_rs(float (&d)[16], const unsigned (&a)[4], unsigned long long desc, int accumulate) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %21, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n32k16.f32.f16.f16 {%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15}, {%16,%17,%18,%19}, %20, p, 1, 1, %22;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc), "r"(accumulate), "n"(TRANS_B));
}
template <int TRANS_B>
__device__ __forceinline__ void wgmma_rs(float (&d)[32], const unsigned (&a)[4], unsigned long long desc, int accumulate) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %37, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31}, {%32,%33,%34,%35}, %36, p, 1, 1, %38;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc), "r"(accumulate), "n"(TRANS_B));
}
template <int TRANS_B>
__device__ __forceinline__ void wgmma_rs(float (&d)[64], const unsigned (&a)[4], unsigned long long desc, int accumulate) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %69, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63}, {%64,%65,%66,%67}, %68, p, 1, 1, %70;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc), "r"(accumulate), "n"(TRANS_B));
}
// The same with A (K-major, 64 rows) through a descriptor too: Q read from
// shared memory (Q_SMEM).
template <int TRANS_B>
__device__ __forceinline__ void wgmma_ss(float (&d)[16], unsigned long long desc_a, unsigned long long desc_b, int accumulate) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %18, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n32k16.f32.f16.f16 {%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15}, %16, %17, p, 1, 1, 0, %19;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15])
        : "l"(desc_a), "l"(desc_b), "r"(accumulate), "n"(TRANS_B));
}
template <int TRANS_B>
__device__ __forceinline__ void wgmma_ss(float (&d)[32], unsigned long long desc_a, unsigned long long desc_b, int accumulate) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31}, %32, %33, p, 1, 1, 0, %35;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
        : "l"(desc_a), "l"(desc_b), "r"(accumulate), "n"(TRANS_B));
}
template <int TRANS_B>
__device__ __forceinline__ void wgmma_ss(float (&d)[64], unsigned long long desc_a, unsigned long long desc_b, int accumulate) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63}, %64, %65, p, 1, 1, 0, %67;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
        : "l"(desc_a), "l"(desc_b), "r"(accumulate), "n"(TRANS_B));
}
#endif  // USE_WGMMA

// This warp's Q rows as A fragments, once (Q never changes), from the
// padded Q tile, or with Q_SMEM (Q_REGS) from the swizzled one, where 16 of D
// are two 16-byte chunks.
__device__ __forceinline__ void load_q_fragments(unsigned (&qf)[MI][HEAD_DIM / 16][4], const half* sQ, int wrow,
                                                 int lane) {
#pragma unroll
    for (int mi = 0; mi < MI; ++mi)
#pragma unroll
        for (int k = 0; k < HEAD_DIM / 16; ++k)
#if Q_SMEM
            ldmatrix_x4(qf[mi][k], swizzled<BLOCK_M>(sQ, wrow + mi * 16 + lane % 16, 2 * k + lane / 16));
#else
            ldmatrix_x4(qf[mi][k], sQ + (wrow + mi * 16 + (lane % 16)) * LDH + k * 16 + (lane / 16) * 8);
#endif
}

// S = Q·Kᵀ for BLOCK_N keys at tK: one ldmatrix.x4 gives an 8-key block's B
// fragments for 32 columns of D. With wgmma and WAIT false the product is
// still in flight on return: s must not be read before the next wait.
// With Q_SMEM, tQ is this warpgroup's first Q row in the swizzled Q tile and
// qf is not read.
template <bool WAIT = true>
__device__ __forceinline__ void mma_qk(float (&s)[MI][NB][4], const unsigned (&qf)[MI][HEAD_DIM / 16][4],
                                       const half* tQ, const half* tK, int lane) {
#if USE_WGMMA
    // K-major B: 16 of D is 32 bytes inside a swizzled 128-byte row; the next
    // 64 of D are the next column block. Q (K-major A) likewise.
    float(&d)[NB * 4] = reinterpret_cast<float(&)[NB * 4]>(s[0]);
    wgmma_fence();
#pragma unroll
    for (int k = 0; k < HEAD_DIM / 16; ++k) {
        const unsigned long long kd = wgmma_desc(tK + (k / 4) * KV_ROWS * 64 + (k % 4) * 16, 16);
#if Q_SMEM && !Q_REGS
        wgmma_ss<0>(d, wgmma_desc(tQ + (k / 4) * BLOCK_M * 64 + (k % 4) * 16, 16), kd, k > 0);
#else
        wgmma_rs<0>(d, qf[0][k], kd, k > 0);
#endif
    }
    (void)tQ;
    if (WAIT)
        wgmma_commit_and_wait();
    else
        wgmma_commit();
    (void)lane;
#else
    (void)tQ;
#pragma unroll
    for (int mi = 0; mi < MI; ++mi)
#pragma unroll
        for (int n = 0; n < NB; ++n)
#pragma unroll
            for (int e = 0; e < 4; ++e) s[mi][n][e] = 0.f;
#pragma unroll
    for (int n = 0; n < NB; ++n) {
#pragma unroll
        for (int k2 = 0; k2 < HEAD_DIM / 32; ++k2) {
            unsigned b[4];
            ldmatrix_x4(b, tK + (n * 8 + (lane % 8)) * LDH + k2 * 32 + (lane / 8) * 8);
#pragma unroll
            for (int mi = 0; mi < MI; ++mi) {
                mma_16816(s[mi][n], qf[mi][2 * k2], b[0], b[1]);
                mma_16816(s[mi][n], qf[mi][2 * k2 + 1], b[2], b[3]);
            }
        }
    }
#endif
}

// -inf for keys past S, and past the query row when causal; only tiles on
// an edge pay for the compares.
__device__ __forceinline__ void mask_scores(float (&s)[MI][NB][4], int key0, int row0, int S, int causal, int lane) {
    const bool edge = key0 + BLOCK_N > S || (causal && key0 + BLOCK_N - 1 > row0);
    if (!edge) return;
    const int g = lane / 4;
    const int q = lane % 4;
#pragma unroll
    for (int mi = 0; mi < MI; ++mi)
#pragma unroll
        for (int n = 0; n < NB; ++n)
#pragma unroll
            for (int e = 0; e < 4; ++e) {
                const int key = key0 + n * 8 + 2 * q + (e % 2);
                const int row = row0 + mi * 16 + g + (e / 2) * 8;
                if (key >= S || (causal && PAST_DIAGONAL(key, row))) s[mi][n][e] = -INFINITY;
            }
}

// The next tile's scores, masked, become this tile's (the pipelined loops).
__device__ __forceinline__ void take_next(float (&s)[MI][NB][4], float (&s_next)[MI][NB][4], int key0, int row0, int S,
                                          int causal, int lane) {
    mask_scores(s_next, key0, row0, S, causal, lane);
#pragma unroll
    for (int mi = 0; mi < MI; ++mi)
#pragma unroll
        for (int n = 0; n < NB; ++n)
#pragma unroll
            for (int e = 0; e < 4; ++e) s[mi][n][e] = s_next[mi][n][e];
}

// The online softmax of one tile's scores, in registers (a row reduces over
// its quad): s becomes P and alpha the factor O and the row sums must take.
// The running max is raised only when a score passes it by 2^RESCALE_LOG2
// (or it is still -inf), so most tiles leave O and the row sums alone
// (alpha = 1); the result says whether any row of the warp was raised.
__device__ __forceinline__ bool softmax_exp(float (&s)[MI][NB][4], float (&m_r)[MI][2], float (&alpha)[MI][2],
                                            float scale_log2) {
    bool raised = false;
#pragma unroll
    for (int mi = 0; mi < MI; ++mi) {
#pragma unroll
        for (int h = 0; h < 2; ++h) {
#if ROWSUM_FADD
            // A tree, not a chain: log2(NB) dependent steps instead of NB.
            float v[NB];
#pragma unroll
            for (int n = 0; n < NB; ++n) v[n] = fmaxf(s[mi][n][2 * h], s[mi][n][2 * h + 1]);
#pragma unroll
            for (int w = 1; w < NB; w *= 2)
#pragma unroll
                for (int n = 0; n + w < NB; n += 2 * w) v[n] = fmaxf(v[n], v[n + w]);
            float mx = v[0];
#else
            float mx = -INFINITY;
#pragma unroll
            for (int n = 0; n < NB; ++n) mx = fmaxf(mx, fmaxf(s[mi][n][2 * h], s[mi][n][2 * h + 1]));
#endif
            mx = fmaxf(mx, __shfl_xor_sync(FULL_MASK, mx, 1));
            mx = fmaxf(mx, __shfl_xor_sync(FULL_MASK, mx, 2));
            const float mx_scaled = mx * scale_log2;
            const bool raise = mx_scaled > m_r[mi][h] + RESCALE_LOG2;
            const float m_new = raise ? mx_scaled : m_r[mi][h];
            // A row with nothing unmasked yet keeps p = 0 rather than NaN.
            const float base = m_new == -INFINITY ? 0.f : m_new;
            alpha[mi][h] = raise ? fast_exp2(m_r[mi][h] - base) : 1.f;
            raised |= raise;
            m_r[mi][h] = m_new;
#pragma unroll
            for (int n = 0; n < NB; ++n)
#pragma unroll
                for (int e = 2 * h; e < 2 * h + 2; ++e) s[mi][n][e] = fast_exp2(fmaf(s[mi][n][e], scale_log2, -base));
        }
    }
    return __any_sync(FULL_MASK, raised);
}

// A row's O in the accumulator layout spreads each 8-column block over the
// quad, 4 bytes a lane. Across four blocks the quad transposes it (two
// shuffle rounds) so that lane q holds block q whole: one 16-byte store
// instead of four 4-byte ones, a quarter of the store instructions and of the
// L1 store wavefronts (docs/perf-log.md, step 27). a[j]: this lane's half2 of
// block j; the result is block q, columns 0-7.
__device__ __forceinline__ uint4 quad_transpose(const unsigned (&a)[4], int q) {
    const bool b = q & 1, p = q & 2;
    // Round 1, lanes q and q ^ 1: the even lane keeps blocks 0 and 2, the odd
    // one blocks 1 and 3, each then holding 4 columns (4 (q / 2) on) of both.
    const unsigned r0 = __shfl_xor_sync(FULL_MASK, b ? a[0] : a[1], 1);
    const unsigned r1 = __shfl_xor_sync(FULL_MASK, b ? a[2] : a[3], 1);
    const unsigned c0lo = b ? r0 : a[0], c0hi = b ? a[1] : r0;  // block b
    const unsigned c1lo = b ? r1 : a[2], c1hi = b ? a[3] : r1;  // block 2 + b
    // Round 2, lanes q and q ^ 2: lane q takes block q's other 4 columns.
    const unsigned u0 = __shfl_xor_sync(FULL_MASK, p ? c0lo : c1lo, 2);
    const unsigned u1 = __shfl_xor_sync(FULL_MASK, p ? c0hi : c1hi, 2);
    return p ? make_uint4(u0, u1, c1lo, c1hi) : make_uint4(c0lo, c0hi, u0, u1);
}

// O and the row sums onto a raised maximum (O must not be in flight).
__device__ __forceinline__ void rescale_o(float (&o)[MI][DB][4], float (&l_acc)[MI][4], const float (&alpha)[MI][2]) {
#pragma unroll
    for (int mi = 0; mi < MI; ++mi)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
            l_acc[mi][e] *= alpha[mi][e / 2];
#if !MUTATE_RESCALE
#pragma unroll
            for (int d = 0; d < DB; ++d) o[mi][d][e] *= alpha[mi][e / 2];
#endif
        }
}

#if USE_WGMMA
#if ROWSUM_FADD
// This thread's parts of the sums of rows g (r[0]) and g + 8 (r[1]) of P,
// as a tree.
__device__ __forceinline__ void row_sums(const float (&s)[MI][NB][4], float (&r)[2]) {
    float r0[NB], r1[NB];
#pragma unroll
    for (int n = 0; n < NB; ++n) {
        r0[n] = s[0][n][0] + s[0][n][1];
        r1[n] = s[0][n][2] + s[0][n][3];
    }
#pragma unroll
    for (int w = 1; w < NB; w *= 2)
#pragma unroll
        for (int n = 0; n + w < NB; n += 2 * w) {
            r0[n] += r0[n + w];
            r1[n] += r1[n + w];
        }
    r[0] = r0[0];
    r[1] = r1[0];
}
#endif

// P as wgmma's A fragments (fp16, straight from the S registers), and its
// row sums into l_acc: by mma.sync against a column of ones (every column of
// that accumulator holds its row's sum of the fp16 P that meets V), or with
// ROWSUM_FADD on the FMA pipe, this thread's part of rows g (l_acc[0][0])
// and g + 8 (l_acc[0][2]), the quad's parts added once after the last tile;
// SUMS false: the caller adds them.
template <bool SUMS = true>
__device__ __forceinline__ void pack_p(const float (&s)[MI][NB][4], unsigned (&pa)[BLOCK_N / 16][4],
                                       float (&l_acc)[MI][4]) {
#if ROWSUM_FADD
    if (SUMS) {
        float r[2];
        row_sums(s, r);
        l_acc[0][0] += r[0];
        l_acc[0][2] += r[1];
    }
#endif
#pragma unroll
    for (int kk = 0; kk < BLOCK_N / 16; ++kk) {
        pa[kk][0] = pack_half2(s[0][2 * kk][0], s[0][2 * kk][1]);
        pa[kk][1] = pack_half2(s[0][2 * kk][2], s[0][2 * kk][3]);
        pa[kk][2] = pack_half2(s[0][2 * kk + 1][0], s[0][2 * kk + 1][1]);
        pa[kk][3] = pack_half2(s[0][2 * kk + 1][2], s[0][2 * kk + 1][3]);
#if !ROWSUM_FADD
        constexpr unsigned ONES = 0x3c003c00u;  // half2(1, 1)
        mma_16816(l_acc[0], pa[kk], ONES, ONES);
#endif
    }
}

#if EXP_FIRST
static_assert(PINGPONG && WARPS == 8 && ROWSUM_FADD && MI == 1,
              "EXP_FIRST (exponentials first) is a tile option of ping-pong tiles with two consumer warpgroups");
// Exponentials first: P against the running maximum m as it stands, then
// this thread's row sums r, each at least every P it adds. If no sum in the
// warpgroup passes 2^(RESCALE_LOG2 - 1), no score passed m by
// 2^RESCALE_LOG2 (a whole power of two spare for rounding), so softmax_exp
// would have kept m and computed this very P, bit for bit. Otherwise (NaN,
// and m = -inf, give no sum that passes the test either) the caller
// computes S again and runs softmax_exp. The verdict is the warpgroup's,
// by bar.red over its 128 threads (named barriers 4 and 5): computing S again
// is a wgmma, which every warp of the warpgroup must issue.
__device__ __forceinline__ bool exp_first(float (&s)[MI][NB][4], const float (&m_r)[MI][2], float (&r)[2],
                                          float scale_log2, int wg) {
#pragma unroll
    for (int h = 0; h < 2; ++h)
#pragma unroll
        for (int n = 0; n < NB; ++n)
#pragma unroll
            for (int e = 2 * h; e < 2 * h + 2; ++e) s[0][n][e] = fast_exp2(fmaf(s[0][n][e], scale_log2, -m_r[0][h]));
    row_sums(s, r);
    constexpr float BOUND = 1 << (int)(RESCALE_LOG2 - 1);
    const int over = !(r[0] <= BOUND && r[1] <= BOUND);
    int any;
    asm volatile(
        "{\n.reg .pred p, q;\nsetp.ne.s32 p, %1, 0;\nbar.red.or.pred q, %2, 128, p;\nselp.s32 %0, 1, 0, q;\n}\n"
        : "=r"(any)
        : "r"(over), "r"(4 + wg)
        : "memory");
    return MUTATE_EXP_FIRST || !any;
}
#endif

// O += P·V issued and committed, not waited for: o and pa must not be
// touched before the next wait. MN-major B: V's rows are the 16-deep steps
// (2048 bytes apart), its 64-column blocks KV_ROWS rows apart.
__device__ __forceinline__ void pv_issue(float (&o)[MI][DB][4], const unsigned (&pa)[BLOCK_N / 16][4], const half* tV) {
    float(&od)[DB * 4] = reinterpret_cast<float(&)[DB * 4]>(o[0]);
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < BLOCK_N / 16; ++kk)
        wgmma_rs<1>(od, pa[kk], wgmma_desc(tV + kk * 16 * 64, HEAD_DIM > 64 ? KV_ROWS * 128 : 1024), 1);
    wgmma_commit();
}
#endif

// One tile: the softmax of s, then O += P·V with P straight from the S
// registers (V's B fragments by ldmatrix.trans without wgmma).
__device__ __forceinline__ void softmax_pv(float (&s)[MI][NB][4], float (&o)[MI][DB][4], float (&l_acc)[MI][4],
                                           float (&m_r)[MI][2], const half* tV, float scale_log2, int lane) {
    float alpha[MI][2];
    if (softmax_exp(s, m_r, alpha, scale_log2)) rescale_o(o, l_acc, alpha);
#if USE_WGMMA
    unsigned pa[BLOCK_N / 16][4];
    pack_p(s, pa, l_acc);
    pv_issue(o, pa, tV);
    wgmma_wait<0>();
    (void)lane;
#else
    constexpr unsigned ONES = 0x3c003c00u;  // half2(1, 1): row sums by mma
#pragma unroll
    for (int kk = 0; kk < BLOCK_N / 16; ++kk) {
        unsigned pa[MI][4];
#pragma unroll
        for (int mi = 0; mi < MI; ++mi) {
            pa[mi][0] = pack_half2(s[mi][2 * kk][0], s[mi][2 * kk][1]);
            pa[mi][1] = pack_half2(s[mi][2 * kk][2], s[mi][2 * kk][3]);
            pa[mi][2] = pack_half2(s[mi][2 * kk + 1][0], s[mi][2 * kk + 1][1]);
            pa[mi][3] = pack_half2(s[mi][2 * kk + 1][2], s[mi][2 * kk + 1][3]);
            mma_16816(l_acc[mi], pa[mi], ONES, ONES);
        }
#pragma unroll
        for (int d2 = 0; d2 < HEAD_DIM / 16; ++d2) {
            unsigned b[4];
            ldmatrix_x4_trans(b, tV + (kk * 16 + (lane % 8) + ((lane / 8) % 2) * 8) * LDH + d2 * 16 + (lane / 16) * 8);
#pragma unroll
            for (int mi = 0; mi < MI; ++mi) {
                mma_16816(o[mi][2 * d2], pa[mi], b[0], b[1]);
                mma_16816(o[mi][2 * d2 + 1], pa[mi], b[2], b[3]);
            }
        }
    }
#endif
}

// ---------------------------------------------------------------------------
// Row blocks: BLOCK_M queries of one head. A CTA computes one, its grid
// position, or with PERSIST a share of all B·H·⌈S / BLOCK_M⌉: its kb-th is
// item kb·gridDim.x + (its position in that round). Non-causal items are
// numbered head by head, so the CTAs running together share K/V in L2.
// Causal ones differ in work (the last row block of a head reads the most
// keys): they are numbered heaviest first, across heads, and every other
// round is dealt backwards, so each CTA's share comes out even.
#if PERSIST
// B·H, written by the host before the launch (docs/kernel-abi.md).
extern "C" __constant__ int attn_heads = 1;
#endif
struct RowBlock {
    int q0;       // first query row
    int bh;       // head: b·H + h
    size_t head;  // its first element: bh·S·HEAD_DIM
    int kv_end;   // keys it reads: S, or causal up to its diagonal
    int n_tiles;  // K/V tiles holding them
};
__device__ __forceinline__ int n_items(int S) {
#if PERSIST
    return (S + BLOCK_M - 1) / BLOCK_M * attn_heads;
#else
    return 1;
#endif
}
// The CTA's kb-th item; n_items(S) or more once it has none left.
__device__ __forceinline__ int item_of(int kb, int causal) {
#if PERSIST
    return kb * gridDim.x + (causal && (kb & 1) ? gridDim.x - 1 - blockIdx.x : blockIdx.x);
#else
    return kb;
#endif
}
__device__ __forceinline__ RowBlock row_block(int item, int S, int causal) {
    RowBlock rb;
#if PERSIST
    const int n_m = (S + BLOCK_M - 1) / BLOCK_M;
    int mb;
    if (causal) {
        rb.bh = item % attn_heads;
        mb = n_m - 1 - item / attn_heads;
    } else {
        rb.bh = item / n_m;
        mb = item % n_m;
    }
    rb.head = (size_t)rb.bh * S * HEAD_DIM;
#else
    (void)item;
    const int n_m = gridDim.x;
    rb.bh = blockIdx.z * gridDim.y + blockIdx.y;
    rb.head = ((size_t)blockIdx.z * gridDim.y + blockIdx.y) * S * HEAD_DIM;
    int mb = blockIdx.x;
    // The blocks the GPU starts first take the most keys, so the last wave
    // is light.
    if (WS && causal) mb = n_m - 1 - mb;
#endif
#if TMA
    // Causal: when S is not a multiple of BLOCK_M, the partial row block is
    // the first (the lightest) rather than the last (the heaviest, which
    // would compute a whole block's keys for a few rows): blocks end at S,
    // the first starts before row 0; TMA reads those rows as zeros, every
    // key is masked for them and they are not written.
    rb.q0 = mb * BLOCK_M - (causal ? n_m * BLOCK_M - S : 0);
#else
    rb.q0 = mb * BLOCK_M;
#endif
    rb.kv_end = causal ? min(S, rb.q0 + BLOCK_M) : S;
    rb.n_tiles = (rb.kv_end + KV_ROWS - 1) / KV_ROWS;
    return rb;
}

#if WS || STAGGER
// mbarriers (WS, STAGGER). Phases: the u-th completion of a barrier is
// waited on with parity u & 1.
__device__ __forceinline__ void mbar_init(unsigned addr, unsigned count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(addr), "r"(count) : "memory");
}
__device__ __forceinline__ void mbar_arrive(unsigned addr) {
    asm volatile("{\n.reg .b64 st;\nmbarrier.arrive.shared::cta.b64 st, [%0];\n}\n" ::"r"(addr) : "memory");
}
#endif

#if WS
// ---------------------------------------------------------------------------
// Producer and consumers (WS).
__device__ __forceinline__ void mbar_wait(unsigned addr, unsigned parity) {
    asm volatile(
        "{\n.reg .pred done;\nWAIT:\n"
        "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
        "@!done bra WAIT;\n}\n" ::"r"(addr),
        "r"(parity)
        : "memory");
}

// The stage protocol, in one place: tile t lives in stage t % STAGES, whose
// full barrier sits at bars + 8 stage and empty barrier at bars + 8 (STAGES
// + stage); it is the (t / STAGES)-th use of both.
__device__ __forceinline__ unsigned full_bar(unsigned bars, int t) { return bars + (t % STAGES) * 8; }
__device__ __forceinline__ unsigned empty_bar(unsigned bars, int t) { return bars + (STAGES + t % STAGES) * 8; }
// Consumers: wait until tile t has landed; say its stage has been read.
__device__ __forceinline__ void wait_tile(unsigned bars, int t) { mbar_wait(full_bar(bars, t), (t / STAGES) & 1); }
__device__ __forceinline__ void release_tile(unsigned bars, int t) { mbar_arrive(empty_bar(bars, t)); }
// The producer: wait until the consumers have released what tile t's stage
// held (tile t - STAGES).
__device__ __forceinline__ void wait_stage_free(unsigned bars, int t) {
    if (t >= STAGES) mbar_wait(empty_bar(bars, t), (t / STAGES - 1) & 1);
}
// TMA: each Q buffer has its own pair after the stages'. Row block kb (the
// CTA's kb-th) uses buffer kb % Q_BUFS. Full: its Q has landed; empty: every
// Q·Kᵀ of it has (with PERSIST the producer then loads a later block's Q).
// Both complete once per use of the buffer: parity (kb / Q_BUFS) & 1.
__device__ __forceinline__ unsigned q_full_bar(unsigned bars, int kb) { return bars + 16 * STAGES + 16 * (kb % Q_BUFS); }
__device__ __forceinline__ unsigned q_empty_bar(unsigned bars, int kb) { return q_full_bar(bars, kb) + 8; }
__device__ __forceinline__ unsigned q_parity(int kb) { return (kb / Q_BUFS) & 1; }
static_assert(16 * STAGES + 16 * Q_BUFS <= BAR_BYTES, "the mbarriers fit their shared memory");
__device__ __forceinline__ void mbar_expect_tx(unsigned bar, unsigned bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
}

// The producer warpgroup copies ROWS rows into a swizzled tile (the layout
// load_rows<ROWS, true> writes), zero-filling rows at or past S. A thread
// keeps one 16-byte column; its rows step by 128 / (HEAD_DIM / 8).
template <int ROWS>
__device__ __forceinline__ void producer_load_rows(half* tile, const half* __restrict__ src, int row0, int S, int lane) {
    constexpr int VEC_PER_ROW = HEAD_DIM / 8;
    constexpr int ROW_STEP = 128 / VEC_PER_ROW;
    const int cv = lane % VEC_PER_ROW;
    const int r0 = lane / VEC_PER_ROW;
    // Not unrolled: the producer runs on 40 registers.
#pragma unroll 1
    for (int j = 0; j < ROWS / ROW_STEP; ++j) {
        const int r = r0 + j * ROW_STEP;
        const bool valid = row0 + r < S;
        const half* g = valid ? src + ((size_t)row0 + r) * HEAD_DIM + cv * 8 : src;
        half* d = swizzled<ROWS>(tile, r, cv);
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_addr(d)), "l"(g),
                     "r"(valid ? 16 : 0));
    }
}

// The producer warpgroup: Q with tile 0, then tile t into stage t % STAGES
// once the consumers have released what it held; each thread waits for its
// own copies, makes them visible to wgmma and arrives on the stage's full
// barrier (128 arrivals complete it).
__device__ __forceinline__ void produce(half* sQ, half* sK, half* sV, const half* __restrict__ Qh,
                                       const half* __restrict__ Kh, const half* __restrict__ Vh, unsigned bars,
                                       int q0, int n_tiles, int S, int lane) {
    for (int t = 0; t < n_tiles; ++t) {
        const int stage = t % STAGES;
        wait_stage_free(bars, t);
        if (t == 0) producer_load_rows<BLOCK_M>(sQ, Qh, q0, S, lane);
        producer_load_rows<KV_ROWS>(sK + stage * KV_TILE_HALVES, Kh, t * KV_ROWS, S, lane);
        producer_load_rows<KV_ROWS>(sV + stage * KV_TILE_HALVES, Vh, t * KV_ROWS, S, lane);
        cp_async_commit();
        cp_async_wait<0>();
        kv_visible_to_wgmma();
        mbar_arrive(full_bar(bars, t));
    }
}

#if TMA
// Tensor maps of Q, K and V, each over the [B·H, S, HEAD_DIM] halves of its
// buffer, a box of 64 columns by attn_tma_rows[i] rows of one head, the
// 128-byte swizzle, rows past S filled with zeros: written by the host
// before a launch (docs/kernel-abi.md). The host reads the box rows here.
struct __align__(64) TensorMap {
    unsigned long long opaque[16];
};
extern "C" {
__constant__ TensorMap attn_tma[3];
__constant__ int attn_tma_rows[3] = {BLOCK_M, KV_ROWS, KV_ROWS};
}

// ROWS rows of head bh from row0 on into a swizzled tile, 64 columns per
// copy (the layout load_rows<ROWS, true> writes); the bytes land on `bar`.
template <int ROWS>
__device__ __forceinline__ void tma_load_rows(half* tile, int which, int row0, int bh, unsigned bar) {
#pragma unroll
    for (int cb = 0; cb < HEAD_DIM / 64; ++cb)
        asm volatile(
            "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes"
            " [%0], [%1, {%2, %3, %4}], [%5];\n" ::"r"(smem_addr(tile + cb * ROWS * 64)),
            "l"(&attn_tma[which]), "r"(cb * 64), "r"(row0), "r"(bh), "r"(bar)
            : "memory");
}

// The TMA producer, one thread, over the CTA's row blocks: the CTA's u-th
// tile into stage u % STAGES once the consumers have released what it held,
// and each block's Q once they are done with the last. It never waits for
// its own copies: a full barrier completes when all their bytes have landed.
__device__ __forceinline__ void produce_tma(half* sQ, half* sK, half* sV, unsigned bars, int S, int causal) {
    constexpr unsigned KV_TILE_BYTES = KV_ROWS * HEAD_DIM * 2;
    constexpr unsigned Q_TILE_BYTES = BLOCK_M * HEAD_DIM * 2;
    // Row block kb's Q into its buffer.
    const auto load_q = [&](int kb, const RowBlock& rb) {
        const unsigned q_full = q_full_bar(bars, kb);
        mbar_expect_tx(q_full, Q_TILE_BYTES);
        tma_load_rows<BLOCK_M>(sQ + (kb % Q_BUFS) * (SQ_TILE_BYTES / 2), 0, rb.q0, rb.bh, q_full);
    };
    int u0 = 0;  // tiles of earlier row blocks
    for (int kb = 0, item = item_of(0, causal); item < n_items(S); item = item_of(++kb, causal)) {
        const RowBlock rb = row_block(item, S, causal);
        // The first Q (with two buffers the first two) goes first. A later
        // one waits until the consumers are done with the Q it replaces, so
        // this block's first K/V go ahead of it. With one buffer that is
        // this block's Q, replacing the last block's; with two, the next
        // block's, replacing the last block's, so it loads while this block
        // runs.
        if (kb == 0) {
            load_q(0, rb);
            const int next = item_of(1, causal);
            if (Q_BUFS == 2 && next < n_items(S)) load_q(1, row_block(next, S, causal));
        }
        for (int t = 0; t < rb.n_tiles; ++t) {
            const int u = u0 + t;
            const int stage = u % STAGES;
            const unsigned full = full_bar(bars, u);
            wait_stage_free(bars, u);
            mbar_expect_tx(full, 2 * KV_TILE_BYTES);
            tma_load_rows<KV_ROWS>(sK + stage * KV_TILE_HALVES, 1, t * KV_ROWS, rb.bh, full);
            tma_load_rows<KV_ROWS>(sV + stage * KV_TILE_HALVES, 2, t * KV_ROWS, rb.bh, full);
            if (t == 0 && kb > 0) {
                const int kq = kb - 1 + Q_BUFS;  // the block whose Q replaces block kb - 1's
                const int item_q = Q_BUFS == 1 ? item : item_of(kq, causal);
                if (item_q < n_items(S)) {
                    mbar_wait(q_empty_bar(bars, kb - 1), q_parity(kb - 1));
                    load_q(kq, Q_BUFS == 1 ? rb : row_block(item_q, S, causal));
                }
            }
        }
        u0 += rb.n_tiles;
    }
}
#endif
#endif

#if STAGGER
// Group k > 0 of a split tile issues its first Q·Kᵀ once group k - 1's has
// landed: mbarrier k - 1 after the merge area, each of group k - 1's threads
// arriving once (mbar_arrive), group k waiting for its first phase. Named
// barriers met from two places (bar.arrive after Q·Kᵀ, bar.sync before it)
// made racecheck report hazards at the merge (run 74), and bar.sync in both
// places is not aligned (synccheck, run 75). test_wait, not mbar_wait's
// try_wait: sm_80 runs i tiles too.
__device__ __forceinline__ unsigned stagger_bar(const unsigned char* smem, int k) {
    return smem_addr(smem + MERGE_AT + MERGE_BYTES) + 8 * (k - 1);
}
__device__ __forceinline__ void stagger_wait(unsigned bar) {
    asm volatile(
        "{\n.reg .pred done;\nSTAGGER_WAIT:\n"
        "mbarrier.test_wait.parity.shared::cta.b64 done, [%0], 0;\n"
        "@!done bra STAGGER_WAIT;\n}\n" ::"r"(bar)
        : "memory");
}
#endif

#if PINGPONG
// Warpgroup wg waits at named barrier 1 + wg for its turn at the tensor
// cores and passes it to the next, round robin (256 threads: one warpgroup
// waits, the one before it arrives).
#define CONSUMER_GROUPS (WARPS / 4)
__device__ __forceinline__ void turn_wait(int wg) { asm volatile("bar.sync %0, 256;\n" ::"r"(1 + wg) : "memory"); }
__device__ __forceinline__ void turn_pass(int wg) {
    asm volatile("bar.arrive %0, 256;\n" ::"r"(1 + (wg + 1) % CONSUMER_GROUPS) : "memory");
}

// A consumer warpgroup's loop. Each turn issues Q·Kᵀ of tile t + 1 and P·V
// of tile t back to back and passes the turn on; the softmax of tile t + 1
// then runs while the other warpgroup's GEMMs (and this one's P·V) run.
// P of tile t waits in pa; O is rescaled only once its P·V has landed.
// Q is read from shared memory (Q_SMEM): qf is not.
__device__ __forceinline__ void consume_pingpong(float (&o)[MI][DB][4], float (&l_acc)[MI][4], float (&m_r)[MI][2],
                                                 const unsigned (&qf)[MI][HEAD_DIM / 16][4], const half* tQ, const half* sK, const half* sV, unsigned bars,
                                                 int u0, int kb, int n_tiles, int row0, int S, int causal,
                                                 float scale_log2, int wg, int lane) {
    // Warpgroup 0 goes first: the last hands it the first turn. Every pass
    // is matched by a wait (the last warpgroup skips its last pass).
    if (wg == CONSUMER_GROUPS - 1) turn_pass(wg);
    float s[MI][NB][4];
    float alpha[MI][2];
    unsigned pa[BLOCK_N / 16][4];
    wait_tile(bars, u0);
    mma_qk(s, qf, tQ, sK + u0 % STAGES * KV_TILE_HALVES, lane);
    mask_scores(s, 0, row0, S, causal, lane);
    softmax_exp(s, m_r, alpha, scale_log2);  // O and the row sums are still 0
    pack_p(s, pa, l_acc);
    // Every tile but the last: straight-line, so ptxas sees which group
    // each wait covers (a conditional Q·Kᵀ made it serialize the wgmmas).
    for (int t = 0; t + 1 < n_tiles; ++t) {
        const int u = u0 + t;  // the CTA's tile number: stage and phase
        wait_tile(bars, u + 1);
        turn_wait(wg);
        mma_qk<false>(s, qf, tQ, sK + (u + 1) % STAGES * KV_TILE_HALVES, lane);
        pv_issue(o, pa, sV + (u % STAGES) * KV_TILE_HALVES);
        turn_pass(wg);
        wgmma_wait<1>();  // Q·Kᵀ landed; P·V may still run
        mask_scores(s, (t + 1) * KV_ROWS, row0, S, causal, lane);
#if EXP_FIRST
        float r[2];
        const bool kept = exp_first(s, m_r, r, scale_log2, wg);
        bool raised = false;
        if (!kept) {
            // S again from the K tile still held (P·V lands meanwhile).
            mma_qk(s, qf, tQ, sK + (u + 1) % STAGES * KV_TILE_HALVES, lane);
            mask_scores(s, (t + 1) * KV_ROWS, row0, S, causal, lane);
            raised = softmax_exp(s, m_r, alpha, scale_log2);
        }
#else
        const bool raised = softmax_exp(s, m_r, alpha, scale_log2);
#endif
        wgmma_wait<0>();
        release_tile(bars, u);
        if (raised) rescale_o(o, l_acc, alpha);
#if EXP_FIRST
        if (!kept) row_sums(s, r);
        l_acc[0][0] += r[0];
        l_acc[0][2] += r[1];
        pack_p<false>(s, pa, l_acc);
#else
        pack_p(s, pa, l_acc);
#endif
    }
    // Every Q·Kᵀ of this row block has landed (Q_REGS: Q was released on entry).
    if (PERSIST && !Q_REGS) mbar_arrive(q_empty_bar(bars, kb));
    turn_wait(wg);
    pv_issue(o, pa, sV + ((u0 + n_tiles - 1) % STAGES) * KV_TILE_HALVES);
    if (wg != CONSUMER_GROUPS - 1) turn_pass(wg);
    wgmma_wait<0>();
    // Only a next row block reuses the stage.
    if (PERSIST) release_tile(bars, u0 + n_tiles - 1);
}
#endif

extern "C" __global__ void __launch_bounds__(THREADS, MIN_BLOCKS)
attention_fwd(const half* __restrict__ Q, const half* __restrict__ K, const half* __restrict__ V,
              half* __restrict__ O, int S, float scale_log2, int causal) {
    extern __shared__ __align__(128) unsigned char smem_raw[];
#if SMEM_SLACK
    // The swizzle is a function of shared-memory address bits: 1024-aligned.
    unsigned char* smem = smem_raw + (SMEM_SLACK - smem_addr(smem_raw) % SMEM_SLACK) % SMEM_SLACK;
#else
    unsigned char* smem = smem_raw;
#endif
    half* sQ = reinterpret_cast<half*>(smem);
    half* sK = reinterpret_cast<half*>(smem + SQ_BYTES);
    half* sV = reinterpret_cast<half*>(smem + SQ_BYTES + SKV_BYTES);

    constexpr int WARPS_PER_GROUP = WARPS / SPLIT;
    const int warp = threadIdx.x / 32;
    const int lane = threadIdx.x % 32;
    const int group = warp / WARPS_PER_GROUP;  // which BLOCK_N rows of a stage this warp takes
    const int wrow = (warp % WARPS_PER_GROUP) * ROWS_PER_WARP;
    const int g = lane / 4;
    const int q = lane % 4;
#if WS
    // Two mbarriers per stage after the tiles (full_bar, empty_bar), then
    // Q's pair (TMA).
    const unsigned bars = smem_addr(smem + TILE_BYTES);
    if (threadIdx.x == 0) {
#pragma unroll
        for (int st = 0; st < STAGES; ++st) {
            mbar_init(full_bar(bars, st), TMA ? 1 : 128);  // TMA: one arrival, then the bytes
            mbar_init(empty_bar(bars, st), CONSUMER_THREADS);
        }
#if TMA
#pragma unroll
        for (int qb = 0; qb < Q_BUFS; ++qb) {
            mbar_init(q_full_bar(bars, qb), 1);
            mbar_init(q_empty_bar(bars, qb), CONSUMER_THREADS);
        }
        // The copy engine completes the full barriers: it must see them made.
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
#endif
    }
    __syncthreads();
    if (warp >= WARPS) {
        // Registers move from the producer to the consumers.
        asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(PRODUCER_REGS));
#if TMA
        if (threadIdx.x == CONSUMER_THREADS) produce_tma(sQ, sK, sV, bars, S, causal);
#else
        const RowBlock rb = row_block(0, S, causal);
        produce(sQ, sK, sV, Q + rb.head, K + rb.head, V + rb.head, bars, rb.q0, rb.n_tiles, S,
                threadIdx.x - CONSUMER_THREADS);
#endif
        return;
    }
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(CONSUMER_REGS));
#endif

    // The CTA's row blocks (one unless PERSIST). With WS, tile t of this one
    // is the CTA's (u0 + t)-th: its stage and mbarrier phase.
#if PERSIST
    int u0 = 0;
    // kb: row blocks before this one
    for (int kb = 0, item = item_of(0, causal); item < n_items(S); item = item_of(++kb, causal)) {
#else
    {
        constexpr int u0 = 0, kb = 0, item = 0;
        (void)u0;
        (void)kb;
#endif
        const RowBlock rb = row_block(item, S, causal);
        const int q0 = rb.q0;
        const int n_tiles = rb.n_tiles;
        const size_t head = rb.head;
#if !WS  // a producer addresses K and V itself
        const half* Kh = K + head;
        const half* Vh = V + head;
        // Q, K0 and V0 travel in the first group.
        load_rows<BLOCK_M, Q_SMEM>(sQ, Q + head, q0, S);
        load_kv(sK, sV, Kh, Vh, 0, S);
        cp_async_commit();
        prefetch_kv(sK, sV, Kh, Vh, n_tiles, S);
#endif
#if STAGGER
        // Made before anyone uses them: the first tile's block barrier.
        if (threadIdx.x == 0)
            for (int k = 1; k < SPLIT; ++k)
                mbar_init(stagger_bar(smem, k), WARPS / SPLIT * 32);
#endif

        // Defined on entry: the two-stage loop loads Q's fragments only at t = 0,
        // and with an undefined entry value the compiler could treat them as dead
        // around the loop; ptxas then put P in Q's registers (run 29).
        unsigned qf[MI][HEAD_DIM / 16][4] = {};
        float o[MI][DB][4];
        float m_r[MI][2];  // running max of (score · scale_log2), rows g and g + 8
        // Row sums of P, by mma against a column of ones: every column of this
        // accumulator holds its row's sum (the sum of the same fp16 P that meets
        // V), for 1 mma per 16 keys instead of 16 adds and a quad reduction.
        float l_acc[MI][4];
#pragma unroll
        for (int mi = 0; mi < MI; ++mi) {
#pragma unroll
            for (int h = 0; h < 2; ++h) m_r[mi][h] = -INFINITY;
#pragma unroll
            for (int e = 0; e < 4; ++e) l_acc[mi][e] = 0.f;
#pragma unroll
            for (int d = 0; d < DB; ++d)
#pragma unroll
                for (int e = 0; e < 4; ++e) o[mi][d][e] = 0.f;
        }

        const int key_off = group * BLOCK_N;  // this group's rows within a stage
        // This row block's Q buffer, and this warpgroup's 64 rows of it
        // (Q_SMEM: swizzled).
        const half* sQb = sQ + (kb % Q_BUFS) * (SQ_TILE_BYTES / 2);
        const half* tQ = sQb + wrow / 64 * 64 * 64;
#if WS
        // The consumers: the three-stage pipeline below, stages taken and given
        // back through the mbarriers instead of block barriers.
        (void)key_off;  // no split
#if TMA
        mbar_wait(q_full_bar(bars, kb), q_parity(kb));
#endif
#if Q_REGS
        // Q into registers, then the buffer goes back to the producer.
        load_q_fragments(qf, sQb, wrow, lane);
        mbar_arrive(q_empty_bar(bars, kb));
#endif
#if PINGPONG
        consume_pingpong(o, l_acc, m_r, qf, tQ, sK, sV, bars, u0, kb, n_tiles, q0 + wrow, S, causal, scale_log2,
                         warp / 4, lane);
#else
        wait_tile(bars, u0);
        float s[MI][NB][4];
        mma_qk(s, qf, tQ, sK + u0 % STAGES * KV_TILE_HALVES, lane);
        mask_scores(s, 0, q0 + wrow, S, causal, lane);
        for (int t = 0; t < n_tiles; ++t) {
            const int u = u0 + t;
            const bool more = t + 1 < n_tiles;
            float s_next[MI][NB][4];
            if (more) {
                wait_tile(bars, u + 1);
                mma_qk<false>(s_next, qf, tQ, sK + (u + 1) % STAGES * KV_TILE_HALVES, lane);
            }
            softmax_pv(s, o, l_acc, m_r, sV + (u % STAGES) * KV_TILE_HALVES, scale_log2, lane);
            // P·V's wait covered every wgmma reading stage u.
            release_tile(bars, u);
            if (more) take_next(s, s_next, (t + 1) * KV_ROWS, q0 + wrow, S, causal, lane);
        }
        if (PERSIST && !Q_REGS) mbar_arrive(q_empty_bar(bars, kb));  // every Q·Kᵀ has landed
#endif  // PINGPONG
#elif PIPELINE
        // Software-pipelined: while a warp runs the softmax and P·V of tile t,
        // Q·Kᵀ of tile t + 1 is issued from the same basic block, so the tensor
        // pipe and the MUFU/ALU chains overlap inside one warp. Tiles t + 1 and
        // t + 2 are in flight, hence three stages.
        cp_async_wait<1>();
        kv_visible_to_wgmma();
        __syncthreads();
        if (!Q_SMEM) load_q_fragments(qf, sQ, wrow, lane);
        float s[MI][NB][4];
        mma_qk(s, qf, tQ, sK + key_off * KV_ROW_HALVES, lane);
        mask_scores(s, key_off, q0 + wrow, S, causal, lane);
        for (int t = 0; t < n_tiles; ++t) {
            if (t + 2 < n_tiles) load_kv(sK, sV, Kh, Vh, t + 2, S);
            cp_async_commit();
            cp_async_wait<1>();  // tile t + 1 is resident
            kv_visible_to_wgmma();
            __syncthreads();
            // Q·Kᵀ of the next tile, if there is one (a stage past the last tile
            // holds nothing this row block needs). With wgmma it runs under this
            // tile's softmax: P·V's wait covers it. `more` is block-uniform.
            const bool more = t + 1 < n_tiles;
            float s_next[MI][NB][4];
            if (more)
                mma_qk<false>(s_next, qf, tQ, sK + ((t + 1) % KV_STAGES) * KV_TILE_HALVES + key_off * KV_ROW_HALVES, lane);
            softmax_pv(s, o, l_acc, m_r, sV + (t % KV_STAGES) * KV_TILE_HALVES + key_off * KV_ROW_HALVES, scale_log2,
                       lane);
            if (more) take_next(s, s_next, (t + 1) * KV_ROWS + key_off, q0 + wrow, S, causal, lane);
            // Every warp is done with tile t before its stage is refilled.
            __syncthreads();
        }
#elif STAGGER
        constexpr int GROUP_THREADS = WARPS_PER_GROUP * 32;
        const unsigned gtid = threadIdx.x % GROUP_THREADS;
        for (int t = 0; t < n_tiles; ++t) {
            // This group's rows of tile t + 1, into the stage tile t - 1 held.
            if (t + 1 < n_tiles) {
                const int st = (t + 1) % KV_STAGES;
                const int r0 = (t + 1) * KV_ROWS + key_off;
                load_rows<BLOCK_N, KV_SWIZZLE, GROUP_THREADS, KV_ROWS>(
                    sK + st * KV_TILE_HALVES + key_off * KV_ROW_HALVES, Kh, r0, S, gtid);
                load_rows<BLOCK_N, KV_SWIZZLE, GROUP_THREADS, KV_ROWS>(
                    sV + st * KV_TILE_HALVES + key_off * KV_ROW_HALVES, Vh, r0, S, gtid);
            }
            cp_async_commit();
            cp_async_wait<1>();
            kv_visible_to_wgmma();
            // Tile 0 and Q came by every thread; later tiles by the group.
            if (t == 0)
                __syncthreads();
            else
                asm volatile("bar.sync %0, %1;\n" ::"r"(1 + group), "n"(GROUP_THREADS) : "memory");
            if (t == 0 && !Q_SMEM) load_q_fragments(qf, sQ, wrow, lane);
            const int stage = t % KV_STAGES;
            const int key0 = t * KV_ROWS + key_off;
            // Group k > 0 waits for group k - 1's first Q·Kᵀ (or its having none).
            if (t == 0 && group > 0) stagger_wait(stagger_bar(smem, group));
            if (key0 < rb.kv_end) {  // warp-uniform: a causal tail may leave a group nothing
                float s[MI][NB][4];
                mma_qk(s, qf, tQ, sK + stage * KV_TILE_HALVES + key_off * KV_ROW_HALVES, lane);
                if (t == 0 && group + 1 < SPLIT) mbar_arrive(stagger_bar(smem, group + 1));
                mask_scores(s, key0, q0 + wrow, S, causal, lane);
                softmax_pv(s, o, l_acc, m_r, sV + stage * KV_TILE_HALVES + key_off * KV_ROW_HALVES, scale_log2, lane);
            } else if (t == 0 && group + 1 < SPLIT) {
                mbar_arrive(stagger_bar(smem, group + 1));
            }
            // The group is done with its rows of this stage before it refills them.
            asm volatile("bar.sync %0, %1;\n" ::"r"(1 + group), "n"(GROUP_THREADS) : "memory");
        }
#else
        for (int t = 0; t < n_tiles; ++t) {
            fetch_kv(sK, sV, Kh, Vh, t, n_tiles, S);
            __syncthreads();
            if (t == 0 && !Q_SMEM) load_q_fragments(qf, sQ, wrow, lane);
            const int stage = t % KV_STAGES;
            const int key0 = t * KV_ROWS + key_off;
            if (key0 < rb.kv_end) {  // warp-uniform: a causal tail may leave a group nothing
                float s[MI][NB][4];
                mma_qk(s, qf, tQ, sK + stage * KV_TILE_HALVES + key_off * KV_ROW_HALVES, lane);
                mask_scores(s, key0, q0 + wrow, S, causal, lane);
                softmax_pv(s, o, l_acc, m_r, sV + stage * KV_TILE_HALVES + key_off * KV_ROW_HALVES, scale_log2, lane);
            }
            // Every warp is done with this stage before it is refilled.
            __syncthreads();
        }
#endif
        float l_r[MI][2];  // full row sums, rows g and g + 8
#pragma unroll
        for (int mi = 0; mi < MI; ++mi) {
            l_r[mi][0] = l_acc[mi][0];
            l_r[mi][1] = l_acc[mi][2];
#if ROWSUM_FADD
            // Each thread summed its part of the row: add the quad's.
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                l_r[mi][h] += __shfl_xor_sync(FULL_MASK, l_r[mi][h], 1);
                l_r[mi][h] += __shfl_xor_sync(FULL_MASK, l_r[mi][h], 2);
            }
#endif
        }

#if SPLIT > 1
        // ---- Merge the groups: each lane of group k > 0 hands its registers to
        // the same lane of the matching warp of group 0 (same rows, same columns;
        // the row sums are already whole in every lane).
        {
            float* merge = reinterpret_cast<float*>(smem + MERGE_AT);
            const int wi = warp % WARPS_PER_GROUP;
            if (group > 0) {
                float* dst = merge + (((group - 1) * WARPS_PER_GROUP + wi) * MERGE_REGS) * 32 + lane;
                int r = 0;
#pragma unroll
                for (int mi = 0; mi < MI; ++mi) {
#pragma unroll
                    for (int h = 0; h < 2; ++h) {
                        dst[32 * r++] = m_r[mi][h];
                        dst[32 * r++] = l_r[mi][h];
                    }
#pragma unroll
                    for (int d = 0; d < DB; ++d)
#pragma unroll
                        for (int e = 0; e < 4; ++e) dst[32 * r++] = o[mi][d][e];
                }
            }
            __syncthreads();
            if (group > 0) return;
#pragma unroll 1
            for (int k = 1; k < SPLIT; ++k) {
                const float* src = merge + (((k - 1) * WARPS_PER_GROUP + wi) * MERGE_REGS) * 32 + lane;
                int r = 0;
#pragma unroll
                for (int mi = 0; mi < MI; ++mi) {
                    float a_self[2], a_other[2];
#pragma unroll
                    for (int h = 0; h < 2; ++h) {
                        const float m_other = src[32 * r++];
                        const float l_other = src[32 * r++];
                        const float m_new = fmaxf(m_r[mi][h], m_other);
                        const float base = m_new == -INFINITY ? 0.f : m_new;
                        a_self[h] = fast_exp2(m_r[mi][h] - base);
                        a_other[h] = fast_exp2(m_other - base);
                        m_r[mi][h] = m_new;
                        l_r[mi][h] = l_r[mi][h] * a_self[h] + l_other * a_other[h];
                    }
#pragma unroll
                    for (int d = 0; d < DB; ++d)
#pragma unroll
                        for (int e = 0; e < 4; ++e)
                            o[mi][d][e] = o[mi][d][e] * (MUTATE_MERGE ? 1.f : a_self[e / 2]) + src[32 * r++] * a_other[e / 2];
                }
            }
        }
#endif

        // ---- Normalize and write the rows that exist.
        half* Oh = O + head;
#pragma unroll
        for (int mi = 0; mi < MI; ++mi) {
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                const float l = l_r[mi][h];
                const float inv = l > 0.f ? 1.f / l : 0.f;
                const int row = q0 + wrow + mi * 16 + g + h * 8;
                // A quad holds the same row: every lane takes part in the
                // transpose, only rows that exist are written.
                const bool valid = row < S && (!TMA || row >= 0);
#pragma unroll
                for (int k = 0; k < DB / 4; ++k) {
                    unsigned a[4];
#pragma unroll
                    for (int j = 0; j < 4; ++j)
                        a[j] = pack_half2(o[mi][4 * k + j][2 * h] * PLANT_INV(inv, row, rb.bh, S),
                                          PLANT_COL(o[mi][4 * k + j][2 * h + 1], o[mi][4 * k + j][2 * h],
                                                    (4 * k + j) * 8 + 2 * q + 1) *
                                              PLANT_INV(inv, row, rb.bh, S));
                    const uint4 v = quad_transpose(a, q);
                    if (valid) *reinterpret_cast<uint4*>(Oh + (size_t)row * HEAD_DIM + (4 * k + q) * 8) = v;
                }
            }
        }
#if PERSIST
        u0 += n_tiles;
#endif
    }  // row blocks
#if INJECT_FAULT
    if (blockIdx.x == 0 && blockIdx.y == 0 && threadIdx.x == 0) O[(size_t)1 << 40] = O[0];
#endif
}

#else  // !USE_MMA
// ---------------------------------------------------------------------------
// The seeds' paths: S goes through shared memory (the scalar loop or WMMA
// write it there), the softmax reads it with two lanes per row, and P·V is
// scalar or WMMA.

#define COLS_PER_LANE (BLOCK_N / 32)
#define SEED_BH (int)(blockIdx.z * gridDim.y + blockIdx.y)  // b·H + h
#define HALF_N (BLOCK_N / 2)     // score columns per lane in the softmax
#define DCHUNKS (HEAD_DIM / 64)  // half2 output columns per lane: 2 * DCHUNKS

extern "C" __global__ void __launch_bounds__(THREADS, MIN_BLOCKS)
attention_fwd(const half* __restrict__ Q, const half* __restrict__ K, const half* __restrict__ V,
              half* __restrict__ O, int S, float scale_log2, int causal) {
    extern __shared__ __align__(128) unsigned char smem[];
    half* sQ = reinterpret_cast<half*>(smem);
    half* sK = reinterpret_cast<half*>(smem + SQ_BYTES);
    half* sV = reinterpret_cast<half*>(smem + SQ_BYTES + SKV_BYTES);
    float* sS = reinterpret_cast<float*>(smem + SQ_BYTES + 2 * SKV_BYTES);
#if USE_WMMA_PV
    half* sP = reinterpret_cast<half*>(smem + SQ_BYTES + 2 * SKV_BYTES + SS_BYTES);
    float* sO = reinterpret_cast<float*>(smem + SQ_BYTES + 2 * SKV_BYTES + SS_BYTES + SP_BYTES);
#endif

    const int warp = threadIdx.x / 32;
    const int lane = threadIdx.x % 32;
    const int q0 = blockIdx.x * BLOCK_M;
    const size_t head = ((size_t)blockIdx.z * gridDim.y + blockIdx.y) * S * HEAD_DIM;
    const half* Qh = Q + head;
    const half* Kh = K + head;
    const half* Vh = V + head;
    half* Oh = O + head;
    const int wrow = warp * ROWS_PER_WARP;  // first tile row of this warp
    // The softmax's view: lane % 16 is the row, lane / 16 the column half.
    // Lanes 0-7 then read rows 0-7 of one half, 4 banks apart (conflict-free).
    const int sr = lane % 16;
    const int sh = lane / 16;

    // Q tile: rows past S are zeros (their outputs are never written).
    {
        constexpr int VEC_PER_ROW = HEAD_DIM / 8;
        for (int i = threadIdx.x; i < BLOCK_M * VEC_PER_ROW; i += THREADS) {
            const int r = i / VEC_PER_ROW;
            const int c = (i % VEC_PER_ROW) * 8;
            const bool valid = q0 + r < S;
            *reinterpret_cast<uint4*>(sQ + r * LDH + c) =
                valid ? *reinterpret_cast<const uint4*>(Qh + (size_t)(q0 + r) * HEAD_DIM + c) : make_uint4(0, 0, 0, 0);
        }
    }

    // Online-softmax state of row sr, the same in both lanes of the row.
    float m_i = -INFINITY;
    float l_i = 0.f;
#if USE_WMMA_PV
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> o_frag[HEAD_DIM / 16];
#pragma unroll
    for (int d = 0; d < HEAD_DIM / 16; ++d) wmma::fill_fragment(o_frag[d], 0.f);
#else
    // Lane owns output columns 2*lane, 2*lane+1 (+64 per chunk of 64).
    float2 o_acc[ROWS_PER_WARP][DCHUNKS];
#pragma unroll
    for (int r = 0; r < ROWS_PER_WARP; ++r)
#pragma unroll
        for (int c = 0; c < DCHUNKS; ++c) o_acc[r][c] = make_float2(0.f, 0.f);
#endif
#if USE_WMMA
    // This warp's Q rows as A fragments, loaded once (Q never changes).
    wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> q_frag[HEAD_DIM / 16];
#endif

    const int kv_end = causal ? min(S, q0 + BLOCK_M) : S;
    const int n_tiles = (kv_end + BLOCK_N - 1) / BLOCK_N;

    load_rows<BLOCK_N>(sK, Kh, 0, S);
    load_rows<BLOCK_N>(sV, Vh, 0, S);
    cp_async_commit();
    prefetch_kv(sK, sV, Kh, Vh, n_tiles, S);

    for (int t = 0; t < n_tiles; ++t) {
        const int kv0 = t * BLOCK_N;
        const int stage = t % KV_STAGES;
        fetch_kv(sK, sV, Kh, Vh, t, n_tiles, S);
        __syncthreads();
        const half* tK = sK + stage * BLOCK_N * LDH;
        const half* tV = sV + stage * BLOCK_N * LDH;

        // ---- S = Q·Kᵀ for this warp's 16 rows, into sS (raw dot products).
#if USE_WMMA
        if (t == 0) {
#pragma unroll
            for (int k = 0; k < HEAD_DIM / 16; ++k) wmma::load_matrix_sync(q_frag[k], sQ + wrow * LDH + k * 16, LDH);
        }
#pragma unroll
        for (int n = 0; n < BLOCK_N / 16; ++n) {
            wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
            wmma::fill_fragment(acc, 0.f);
#pragma unroll
            for (int k = 0; k < HEAD_DIM / 16; ++k) {
                wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> b;
                wmma::load_matrix_sync(b, tK + n * 16 * LDH + k * 16, LDH);
                wmma::mma_sync(acc, q_frag[k], b, acc);
            }
            wmma::store_matrix_sync(sS + wrow * LDS + n * 16, acc, LDS, wmma::mem_row_major);
        }
        __syncwarp();
#else
        {
            float s_acc[ROWS_PER_WARP][COLS_PER_LANE];
#pragma unroll
            for (int r = 0; r < ROWS_PER_WARP; ++r)
#pragma unroll
                for (int c = 0; c < COLS_PER_LANE; ++c) s_acc[r][c] = 0.f;
// Unrolling deeper makes ptxas spill (seen on sm_90, D=128 and BLOCK_N=32).
#pragma unroll 2
            for (int k = 0; k < HEAD_DIM; k += 2) {
                float2 kv[COLS_PER_LANE];
#pragma unroll
                for (int c = 0; c < COLS_PER_LANE; ++c)
                    kv[c] = __half22float2(*reinterpret_cast<const half2*>(tK + (lane + 32 * c) * LDH + k));
#pragma unroll
                for (int r = 0; r < ROWS_PER_WARP; ++r) {
                    const float2 q = __half22float2(*reinterpret_cast<const half2*>(sQ + (wrow + r) * LDH + k));
#pragma unroll
                    for (int c = 0; c < COLS_PER_LANE; ++c) s_acc[r][c] += q.x * kv[c].x + q.y * kv[c].y;
                }
            }
#pragma unroll
            for (int r = 0; r < ROWS_PER_WARP; ++r)
#pragma unroll
                for (int c = 0; c < COLS_PER_LANE; ++c) sS[(wrow + r) * LDS + lane + 32 * c] = s_acc[r][c];
        }
        __syncwarp();
#endif

        // ---- Online softmax over this tile, two lanes per row: each lane has
        // HALF_N independent values and a row reduces with one shuffle.
        float alpha;
        {
            const int qrow = q0 + wrow + sr;
            float* srow = sS + (wrow + sr) * LDS + sh * HALF_N;
            float v[HALF_N];
#pragma unroll
            for (int c = 0; c < HALF_N; c += 4) {
                const float4 x = *reinterpret_cast<const float4*>(srow + c);
                v[c] = x.x;
                v[c + 1] = x.y;
                v[c + 2] = x.z;
                v[c + 3] = x.w;
            }
            float tile_max = -INFINITY;
#pragma unroll
            for (int c = 0; c < HALF_N; ++c) {
                const int col = kv0 + sh * HALF_N + c;
                const bool masked = col >= S || (causal && PAST_DIAGONAL(col, qrow));
                v[c] = masked ? -INFINITY : v[c] * scale_log2;
                tile_max = fmaxf(tile_max, v[c]);
            }
            tile_max = fmaxf(tile_max, __shfl_xor_sync(FULL_MASK, tile_max, 16));
#if USE_WMMA_PV
            // Raising the max costs a trip of O through shared memory, so it
            // is kept until a score exceeds it by 2^RESCALE_LOG2.
            const bool grow = m_i != -INFINITY && tile_max > m_i + RESCALE_LOG2;
            const float m_new = m_i == -INFINITY || grow ? tile_max : m_i;
#else
            const float m_new = fmaxf(m_i, tile_max);
#endif
            // A row with nothing unmasked yet keeps p = 0 rather than NaN.
            const float base = m_new == -INFINITY ? 0.f : m_new;
            alpha = exp2f(m_i - base);
            float row_sum = 0.f;
#pragma unroll
            for (int c = 0; c < HALF_N; ++c) {
                v[c] = exp2f(v[c] - base);
                row_sum += v[c];
            }
#if USE_WMMA_PV
            half* prow = sP + (wrow + sr) * LDP + sh * HALF_N;
#pragma unroll
            for (int c = 0; c < HALF_N; c += 8) {
                uint4 pk;
                __half2 h0 = __floats2half2_rn(v[c], v[c + 1]);
                __half2 h1 = __floats2half2_rn(v[c + 2], v[c + 3]);
                __half2 h2 = __floats2half2_rn(v[c + 4], v[c + 5]);
                __half2 h3 = __floats2half2_rn(v[c + 6], v[c + 7]);
                pk.x = *reinterpret_cast<unsigned*>(&h0);
                pk.y = *reinterpret_cast<unsigned*>(&h1);
                pk.z = *reinterpret_cast<unsigned*>(&h2);
                pk.w = *reinterpret_cast<unsigned*>(&h3);
                *reinterpret_cast<uint4*>(prow + c) = pk;
            }
#else
#pragma unroll
            for (int c = 0; c < HALF_N; c += 4)
                *reinterpret_cast<float4*>(srow + c) = make_float4(v[c], v[c + 1], v[c + 2], v[c + 3]);
#endif
            row_sum += __shfl_xor_sync(FULL_MASK, row_sum, 16);
            l_i = l_i * alpha + row_sum;
            m_i = m_new;
#if USE_WMMA_PV
            if (__any_sync(FULL_MASK, grow)) {
                // Rows that did not grow have alpha = 1.
#pragma unroll
                for (int d = 0; d < HEAD_DIM / 16; ++d)
                    wmma::store_matrix_sync(sO + wrow * LDO + d * 16, o_frag[d], LDO, wmma::mem_row_major);
                __syncwarp();
                float* orow = sO + (wrow + sr) * LDO + sh * (HEAD_DIM / 2);
#pragma unroll
                for (int d = 0; d < HEAD_DIM / 2; ++d) orow[d] *= MUTATE_RESCALE ? 1.f : alpha;
                __syncwarp();
#pragma unroll
                for (int d = 0; d < HEAD_DIM / 16; ++d)
                    wmma::load_matrix_sync(o_frag[d], sO + wrow * LDO + d * 16, LDO, wmma::mem_row_major);
            }
#endif
        }
        __syncwarp();

        // ---- O += P·V.
#if USE_WMMA_PV
        {
            wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> p_frag[BLOCK_N / 16];
#pragma unroll
            for (int k = 0; k < BLOCK_N / 16; ++k) wmma::load_matrix_sync(p_frag[k], sP + wrow * LDP + k * 16, LDP);
#pragma unroll
            for (int d = 0; d < HEAD_DIM / 16; ++d) {
#pragma unroll
                for (int k = 0; k < BLOCK_N / 16; ++k) {
                    wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::row_major> b;
                    wmma::load_matrix_sync(b, tV + k * 16 * LDH + d * 16, LDH);
                    wmma::mma_sync(o_frag[d], p_frag[k], b, o_frag[d]);
                }
            }
        }
#else
        // Row r's alpha lives in lane r (and r + 16).
#pragma unroll
        for (int r = 0; r < ROWS_PER_WARP; ++r) {
            const float a = MUTATE_RESCALE ? 1.f : __shfl_sync(FULL_MASK, alpha, r);
#pragma unroll
            for (int c = 0; c < DCHUNKS; ++c) {
                o_acc[r][c].x *= a;
                o_acc[r][c].y *= a;
            }
        }
#pragma unroll 2
        for (int j = 0; j < BLOCK_N; ++j) {
            float2 vv[DCHUNKS];
#pragma unroll
            for (int c = 0; c < DCHUNKS; ++c)
                vv[c] = __half22float2(*reinterpret_cast<const half2*>(tV + j * LDH + 2 * lane + 64 * c));
#pragma unroll
            for (int r = 0; r < ROWS_PER_WARP; ++r) {
                const float p = sS[(wrow + r) * LDS + j];
#pragma unroll
                for (int c = 0; c < DCHUNKS; ++c) {
                    o_acc[r][c].x += p * vv[c].x;
                    o_acc[r][c].y += p * vv[c].y;
                }
            }
        }
#endif
        // Every warp is done with this stage before it is refilled.
        __syncthreads();
    }

    // ---- Normalize and write the rows that exist.
    const float inv = l_i > 0.f ? 1.f / l_i : 0.f;  // of row sr
#if USE_WMMA_PV
#pragma unroll
    for (int d = 0; d < HEAD_DIM / 16; ++d)
        wmma::store_matrix_sync(sO + wrow * LDO + d * 16, o_frag[d], LDO, wmma::mem_row_major);
    __syncwarp();
    {
        const int qrow = q0 + wrow + sr;
        if (qrow < S) {
            const float* orow = sO + (wrow + sr) * LDO + sh * (HEAD_DIM / 2);
            half* dst = Oh + (size_t)qrow * HEAD_DIM + sh * (HEAD_DIM / 2);
#pragma unroll
            for (int d = 0; d < HEAD_DIM / 2; d += 2)
                *reinterpret_cast<half2*>(dst + d) = __float22half2_rn(
                    make_float2(orow[d] * PLANT_INV(inv, qrow, SEED_BH, S),
                                PLANT_COL(orow[d + 1], orow[d], sh * (HEAD_DIM / 2) + d + 1) * PLANT_INV(inv, qrow, SEED_BH, S)));
        }
    }
#else
#pragma unroll
    for (int r = 0; r < ROWS_PER_WARP; ++r) {
        const int qrow = q0 + wrow + r;
        const float inv_r = __shfl_sync(FULL_MASK, inv, r);
        if (qrow >= S) continue;
#pragma unroll
        for (int c = 0; c < DCHUNKS; ++c) {
            const float2 o = make_float2(
                o_acc[r][c].x * PLANT_INV(inv_r, qrow, SEED_BH, S),
                PLANT_COL(o_acc[r][c].y, o_acc[r][c].x, 2 * lane + 64 * c + 1) * PLANT_INV(inv_r, qrow, SEED_BH, S));
            *reinterpret_cast<half2*>(Oh + (size_t)qrow * HEAD_DIM + 2 * lane + 64 * c) = __float22half2_rn(o);
        }
    }
#endif
#if INJECT_FAULT
    if (blockIdx.x == 0 && blockIdx.y == 0 && threadIdx.x == 0) O[(size_t)1 << 40] = O[0];
#endif
}
#endif  // USE_MMA
