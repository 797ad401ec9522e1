// Warp specialization (WS): the stage protocol the producer warpgroup and
// the consumers share (a full and an empty mbarrier per stage, a pair per Q
// buffer), and the producer itself, loading by cp.async (128 threads) or by
// the Tensor Memory Accelerator (TMA, one thread, over every row block of a
// persistent CTA).

#if WS
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

// The producer warpgroup copies ROWS rows into a swizzled tile (the layout
// load_rows<ROWS, true> writes), zero-filling rows at or past n_rows. A thread
// keeps one 16-byte column; its rows step by 128 / (HEAD_DIM / 8).
template <int ROWS>
__device__ __forceinline__ void producer_load_rows(attn_t* tile, const attn_t* __restrict__ src, int row0, int n_rows,
                                                   int lane) {
    constexpr int VEC_PER_ROW = HEAD_DIM / 8;
    constexpr int ROW_STEP = 128 / VEC_PER_ROW;
    const int cv = lane % VEC_PER_ROW;
    const int r0 = lane / VEC_PER_ROW;
    // Not unrolled: the producer runs on 40 registers.
#pragma unroll 1
    for (int j = 0; j < ROWS / ROW_STEP; ++j) {
        const int r = r0 + j * ROW_STEP;
        const bool valid = row0 + r < n_rows;
        const attn_t* g = valid ? src + ((size_t)row0 + r) * HEAD_DIM + cv * 8 : src;
        attn_t* d = swizzled<ROWS>(tile, r, cv);
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_addr(d)), "l"(g),
                     "r"(valid ? 16 : 0));
    }
}

// The producer warpgroup: Q (Sq rows) with tile 0, then K/V tile t (of Sk
// rows) into stage t % STAGES
// once the consumers have released what it held; each thread waits for its
// own copies, makes them visible to wgmma and arrives on the stage's full
// barrier (128 arrivals complete it).
__device__ __forceinline__ void produce(attn_t* sQ, attn_t* sK, attn_t* sV, const attn_t* __restrict__ Qh,
                                       const attn_t* __restrict__ Kh, const attn_t* __restrict__ Vh, unsigned bars,
                                       int q0, int n_tiles, int Sq, int Sk, int lane) {
    for (int t = 0; t < n_tiles; ++t) {
        const int stage = t % STAGES;
        wait_stage_free(bars, t);
        if (t == 0) producer_load_rows<BLOCK_M>(sQ, Qh, q0, Sq, lane);
        producer_load_rows<KV_ROWS>(sK + stage * KV_TILE_HALVES, Kh, t * KV_ROWS, Sk, lane);
        producer_load_rows<KV_ROWS>(sV + stage * KV_TILE_HALVES, Vh, t * KV_ROWS, Sk, lane);
        cp_async_commit();
        cp_async_wait<0>();
        kv_visible_to_wgmma();
        mbar_arrive(full_bar(bars, t));
    }
}

#if TMA
// Tensor maps of Q ([B·Hq, Sq, HEAD_DIM]), K and V ([B·Hkv, Sk, HEAD_DIM]),
// 16-bit elements (fp16 or bf16), a box of 64 columns by attn_tma_rows[i]
// rows of one head, the 128-byte swizzle, rows past the length filled with
// zeros: written by the host before a launch (docs/kernel-abi.md). The host
// reads the box rows here.
struct __align__(64) TensorMap {
    unsigned long long opaque[16];
};
extern "C" {
__constant__ TensorMap attn_tma[3];
__constant__ int attn_tma_rows[3] = {BLOCK_M, KV_ROWS, KV_ROWS};
}

// ROWS rows of head bh (of Q: b·Hq + h; of K, V: b·Hkv + h / (Hq / Hkv))
// from row0 on into a swizzled tile, 64 columns per copy (the layout
// load_rows<ROWS, true> writes); the bytes land on `bar`.
template <int ROWS>
__device__ __forceinline__ void tma_load_rows(attn_t* tile, int which, int row0, int bh, unsigned bar) {
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
__device__ __forceinline__ void produce_tma(attn_t* sQ, attn_t* sK, attn_t* sV, unsigned bars, int Sq, int Sk, int Hq,
                                           int Hkv, int causal) {
    constexpr unsigned KV_TILE_BYTES = KV_ROWS * HEAD_DIM * 2;
    constexpr unsigned Q_TILE_BYTES = BLOCK_M * HEAD_DIM * 2;
    // Row block kb's Q into its buffer.
    const auto load_q = [&](int kb, const RowBlock& rb) {
        const unsigned q_full = q_full_bar(bars, kb);
        mbar_expect_tx(q_full, Q_TILE_BYTES);
        tma_load_rows<BLOCK_M>(sQ + (kb % Q_BUFS) * (SQ_TILE_BYTES / 2), 0, rb.q0, rb.bh, q_full);
    };
    int u0 = 0;  // tiles of earlier row blocks
    for (int kb = 0, item = item_of(0, causal); item < n_items(Sq); item = item_of(++kb, causal)) {
        const RowBlock rb = row_block(item, Sq, Sk, Hq, Hkv, causal);
        // The first Q (with two buffers the first two) goes first. A later
        // one waits until the consumers are done with the Q it replaces, so
        // this block's first K/V go ahead of it. With one buffer that is
        // this block's Q, replacing the last block's; with two, the next
        // block's, replacing the last block's, so it loads while this block
        // runs.
        if (kb == 0) {
            load_q(0, rb);
            const int next = item_of(1, causal);
            if (Q_BUFS == 2 && next < n_items(Sq)) load_q(1, row_block(next, Sq, Sk, Hq, Hkv, causal));
        }
        for (int t = 0; t < rb.n_tiles; ++t) {
            const int u = u0 + t;
            const int stage = u % STAGES;
            const unsigned full = full_bar(bars, u);
            wait_stage_free(bars, u);
            mbar_expect_tx(full, 2 * KV_TILE_BYTES);
            tma_load_rows<KV_ROWS>(sK + stage * KV_TILE_HALVES, 1, t * KV_ROWS, rb.kv_bh, full);
            tma_load_rows<KV_ROWS>(sV + stage * KV_TILE_HALVES, 2, t * KV_ROWS, rb.kv_bh, full);
            if (t == 0 && kb > 0) {
                const int kq = kb - 1 + Q_BUFS;  // the block whose Q replaces block kb - 1's
                const int item_q = Q_BUFS == 1 ? item : item_of(kq, causal);
                if (item_q < n_items(Sq)) {
                    mbar_wait(q_empty_bar(bars, kb - 1), q_parity(kb - 1));
                    load_q(kq, Q_BUFS == 1 ? rb : row_block(item_q, Sq, Sk, Hq, Hkv, causal));
                }
            }
        }
        u0 += rb.n_tiles;
    }
}
#endif
#endif
