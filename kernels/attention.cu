// FlashAttention-2-style forward pass: O = softmax(Q·Kᵀ / √D) · V, one pass
// over K/V with an online softmax, fp32 accumulation. Kernel ABI 2
// (docs/kernel-abi.md): Q and O [B, Hq, Sq, D], K and V [B, Hkv, Sk, D];
// query head h reads K/V head h / (Hq / Hkv) (grouped-query attention);
// causal masks key j for query i when j > i + Sk - Sq (aligned to the end:
// the last query sees every key). Elements are attn_t: fp16, or bf16 with
// -DATTN_BF16=1 (the mma path only; the seeds' path is fp16). D is 64, 128,
// or 256 for wgmma tiles that fit (attention.toml's [[supports]]).
// Compiled at run time by NVRTC; the toggles are -D defines (seeds 000-004,
// then issue 9):
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
//   DECODE        a tile option of mma+async tiles (issue 41, the d flag):
//                 split-KV decoding (attention/decode.cuh, its own kernel
//                 body): a CTA's rows are the query rows of one K/V head's
//                 group of query heads, so K/V are read once per group; the
//                 keys are split over grid.y CTAs whose partial results the
//                 last to finish merges through a static scratch buffer.
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
//                 K/V while the consumers finish and store this one; B·Hq
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
//
// Reading it. This file holds the entry point of the mma path; the parts it
// includes from attention/ hold the rest, one idea each, after
// FlashAttention-3's hopper/ folder:
//   config.cuh          the defines above with their defaults, the element
//                       type attn_t, the checks that refuse a tile, what
//                       follows from them (warps, rows per warp, stages,
//                       registers), the shared-memory carve-up, the K/V head
//                       of a query head and the causal shift
//   primitives.cuh      one-instruction wrappers: swizzle, ldmatrix, mma.sync,
//                       wgmma and its descriptors, mbarriers, a quad's
//                       transpose by shuffles; the conversions to attn_t
//   loads.cuh           global to shared memory by the consumers (cp.async)
//   softmax.cuh         the online softmax in registers, P packed for P·V
//   tile_gemms.cuh      one tile's Q·Kᵀ, mask and P·V (softmax_pv)
//   tile_scheduler.cuh  which row block a CTA computes (PERSIST: several),
//                       its Q and K/V heads and how many K/V tiles it reads
//   producer.cuh        WS: the stage protocol and the producer warpgroup
//                       (cp.async or TMA)
//   one main loop per schedule; a tile runs exactly one, chosen by its tags
//   (docs/kernel-abi.md, "Tile parameters") near the end of attention_fwd,
//   where the schedule's file is included (all but ping-pong are fragments of
//   the kernel's body, see mainloop_plain.cuh for why):
//   mainloop_pingpong.cuh   ping-pong consumers (o; p, a producer, comes with it)
//   mainloop_ws.cuh         the other producer tiles (p: WS)
//   mainloop_pipelined.cuh  three stages with cp.async, no producer (s3)
//   mainloop_stagger.cuh    staggered split tiles (i)
//   mainloop_plain.cuh      every other mma tile
//   epilogue.cuh        row sums made whole, split groups merged, O written
//   decode.cuh          DECODE (d): the split-KV decode kernel, its own body
//   seed_path.cuh       the seeds' kernel (scalar, WMMA), without USE_MMA
// To follow one tile, read its tags (attention.toml's [[param]]s), then the
// schedule they select. 192x128s3w12gqptor, say: BLOCK_M 192, BLOCK_N 128,
// 3 stages, 12 consumer warps (three warpgroups), wgmma (g) reading Q from
// shared memory (q), a producer warpgroup (p: WS) loading by TMA (t),
// ping-pong (o: PINGPONG), persistent CTAs (r: PERSIST). So: attention_fwd below (the producer fork
// under WS, the persistent row-block loop of tile_scheduler.cuh), then
// producer.cuh's produce_tma for the producer and mainloop_pingpong.cuh's
// consume_pingpong for the consumers, over tile_gemms.cuh and softmax.cuh,
// then epilogue.cuh.

#include "attention/config.cuh"
#include "attention/primitives.cuh"
#include "attention/mutations.cuh"
#include "attention/loads.cuh"

#if USE_MMA
#include "attention/softmax.cuh"
#include "attention/tile_gemms.cuh"
#include "attention/tile_scheduler.cuh"
#include "attention/producer.cuh"
#include "attention/mainloop_pingpong.cuh"

#if DECODE
#include "attention/decode.cuh"
#else
extern "C" __global__ void __launch_bounds__(THREADS, MIN_BLOCKS)
attention_fwd(const attn_t* __restrict__ Q, const attn_t* __restrict__ K, const attn_t* __restrict__ V,
              attn_t* __restrict__ O, int Sq, int Sk, int Hq, int Hkv, float scale_log2, int causal) {
    FOLD_PLAIN(Sq, Sk, Hq, Hkv);
    PLANT_DELAY_HERE();
    extern __shared__ __align__(128) unsigned char smem_raw[];
#if SMEM_SLACK
    // The swizzle is a function of shared-memory address bits: 1024-aligned.
    unsigned char* smem = smem_raw + (SMEM_SLACK - smem_addr(smem_raw) % SMEM_SLACK) % SMEM_SLACK;
#else
    unsigned char* smem = smem_raw;
#endif
    attn_t* sQ = reinterpret_cast<attn_t*>(smem);
    attn_t* sK = reinterpret_cast<attn_t*>(smem + SQ_BYTES);
    attn_t* sV = reinterpret_cast<attn_t*>(smem + SQ_BYTES + SKV_BYTES);

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
        if (threadIdx.x == CONSUMER_THREADS) produce_tma(sQ, sK, sV, bars, Sq, Sk, Hq, Hkv, causal);
#else
        const RowBlock rb = row_block(0, Sq, Sk, Hq, Hkv, causal);
        produce(sQ, sK, sV, Q + rb.q_head, K + rb.kv_head, V + rb.kv_head, bars, rb.q0, rb.n_tiles, Sq, Sk,
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
    for (int kb = 0, item = item_of(0, causal); item < n_items(Sq); item = item_of(++kb, causal)) {
#else
    {
        constexpr int u0 = 0, kb = 0, item = 0;
        (void)u0;
        (void)kb;
#endif
        const RowBlock rb = row_block(item, Sq, Sk, Hq, Hkv, causal);
        const int q0 = rb.q0;
        const int n_tiles = rb.n_tiles;
        // The diagonal key of this warp's first query row (causal).
        const int diag0 = q0 + wrow + CAUSAL_SHIFT(Sq, Sk);
#if !WS  // a producer addresses K and V itself
        const attn_t* Kh = K + rb.kv_head;
        const attn_t* Vh = V + rb.kv_head;
        // Q, K0 and V0 travel in the first group.
        load_rows<BLOCK_M, Q_SMEM>(sQ, Q + rb.q_head, q0, Sq);
        load_kv(sK, sV, Kh, Vh, 0, Sk);
        cp_async_commit();
        prefetch_kv(sK, sV, Kh, Vh, n_tiles, Sk);
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
        // accumulator holds its row's sum (the sum of the same rounded P that
        // meets V), for 1 mma per 16 keys instead of 16 adds and a quad reduction.
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
        const attn_t* sQb = sQ + (kb % Q_BUFS) * (SQ_TILE_BYTES / 2);
        const attn_t* tQ = sQb + wrow / 64 * 64 * 64;
#if WS
        // The consumers: the three-stage pipeline, stages taken and given
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
        consume_pingpong(o, l_acc, m_r, qf, tQ, sK, sV, bars, u0, kb, n_tiles, diag0, Sk, causal, scale_log2,
                         warp / 4, lane);
#else
#include "attention/mainloop_ws.cuh"
#endif  // PINGPONG
#elif PIPELINE
#include "attention/mainloop_pipelined.cuh"
#elif STAGGER
#include "attention/mainloop_stagger.cuh"
#else
#include "attention/mainloop_plain.cuh"
#endif
#include "attention/epilogue.cuh"
#if PERSIST
        u0 += n_tiles;
#endif
    }  // row blocks
#if INJECT_FAULT
    if (blockIdx.x == 0 && blockIdx.y == 0 && threadIdx.x == 0) O[(size_t)1 << 40] = O[0];
#endif
}
#endif  // DECODE

#else  // !USE_MMA
#include "attention/seed_path.cuh"
#endif  // USE_MMA
