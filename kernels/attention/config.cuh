// The configuration: every toggle and tile parameter (-D defines, each with
// a default so the file also compiles alone), what follows from them, the
// checks that refuse a tile the code cannot run, the shared-memory carve-up
// and the constants the host reads. Included first, once.

#ifndef HEAD_DIM
#define HEAD_DIM 64
#endif
// The element type of Q, K, V and O: 0 fp16 (half), 1 bf16 (__nv_bfloat16).
// Only the mma path takes bf16 (see the check below).
#ifndef ATTN_BF16
#define ATTN_BF16 0
#endif
// 1 when the host builds for a shape with Hkv = Hq and Sk = Sq (kernel ABI 2
// passes it): the parameters are then folded, so multi-head attention
// compiles to what it was before grouped heads and caches (step 41).
#ifndef ATTN_PLAIN
#define ATTN_PLAIN 0
#endif
#if ATTN_PLAIN
#define FOLD_PLAIN(Sq, Sk, Hq, Hkv) \
    do {                            \
        Sk = Sq;                    \
        Hkv = Hq;                   \
    } while (0)
#else
#define FOLD_PLAIN(Sq, Sk, Hq, Hkv) \
    do {                            \
    } while (0)
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
#ifndef DECODE
#define DECODE 0
#endif

#include <cuda_fp16.h>
#if ATTN_BF16
#include <cuda_bf16.h>
typedef __nv_bfloat16 attn_t;
#else
typedef half attn_t;
#endif
#if ATTN_BF16 && !USE_MMA
// The seeds' scalar and WMMA code converts through half2 and WMMA's half
// fragments; the manifest declares bf16 for the mma path only.
#error "ATTN_BF16=1 needs the mma path (USE_MMA=1): the seed path (scalar, WMMA) is fp16 only"
#endif
#ifndef INFINITY
#define INFINITY __int_as_float(0x7f800000)
#endif
#if USE_WMMA || USE_WMMA_PV
#include <mma.h>
using namespace nvcuda;
#endif

static_assert(BLOCK_N % 32 == 0 && BLOCK_N <= 128, "BLOCK_N must be 32, 64, 96 or 128");
static_assert(HEAD_DIM == 64 || HEAD_DIM == 128 || HEAD_DIM == 256, "HEAD_DIM must be 64, 128 or 256");
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
static_assert(!DECODE || (USE_MMA && USE_CP_ASYNC && STAGES >= 2 && !USE_WGMMA && !STAGGER),
              "DECODE (d, split-KV decoding) is a tile option of mma+async tiles with 2 or 3 stages, without g or i");
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
#if DECODE
// Decode tiles: unpadded rows, the 16-byte chunk c of row r stored at chunk
// c ^ (r % 8), so a 128-byte line of K or V lands in one aligned 128-byte line
// of shared memory (one L2 request; a padded row straddles two) and eight
// ldmatrix rows still hit 32 distinct banks (docs/perf-log.md, step 48).
#define LDH HEAD_DIM
#define ROW_AT(base, row, col) ((base) + (row) * HEAD_DIM + ((((col) >> 3) ^ ((row) & 7)) << 3) + ((col) & 7))
#else
#define LDH (HEAD_DIM + 8)   // half row stride of Q, K, V tiles
#define ROW_AT(base, row, col) ((base) + (row) * LDH + (col))
#endif
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

// The configuration as C++ constants, for `if constexpr` where both branches
// compile in every configuration (a declaration that exists only in some, or
// a __constant__ the host looks for, stays under #if). Enumerators, not
// constexpr variables: NVRTC gives every namespace-scope variable a slot in
// constant bank 4, and so every cubin a section it did not have.
namespace cfg {
enum : bool {
    cp_async = USE_CP_ASYNC != 0,
    wgmma = USE_WGMMA != 0,
    q_smem = Q_SMEM != 0,
    q_regs = Q_REGS != 0,
    rowsum_fadd = ROWSUM_FADD != 0,
};
enum : int { stages = STAGES };
}  // namespace cfg

extern "C" __constant__ int attn_smem_bytes = SMEM_BYTES;
extern "C" __constant__ int attn_threads = THREADS;
extern "C" __constant__ int attn_block_m = BLOCK_M;
// The whole configuration, so every define set yields distinct PTX: NVRTC
// 13.0 on the GPU machine printed no PTXAS report for a PTX it had already
// assembled in the same process (single-stage variants equal the default).
extern "C" __constant__ int attn_config[16] = {HEAD_DIM, BLOCK_M, STAGES,  WARPS,  USE_WMMA, USE_WMMA_PV, USE_CP_ASYNC, USE_MMA,
                                               SPLIT,    USE_WGMMA, BLOCK_N, Q_SMEM, WS,       TMA,         PINGPONG, PERSIST};

#if USE_MMA
#define MI (ROWS_PER_WARP / 16)  // 16-row m-tiles per warp
#define NB (BLOCK_N / 8)         // 8-key blocks of a sub-tile
#define DB (HEAD_DIM / 8)        // 8-column blocks of O
// Three stages let Q·Kᵀ of the next tile overlap this tile's softmax.
#define PIPELINE (USE_CP_ASYNC && STAGES == 3)
#endif
