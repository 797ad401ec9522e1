// Global to shared memory by the consumer threads themselves: one tile's
// rows by cp.async (USE_CP_ASYNC) or plain 16-byte loads, and the K/V
// staging of the schedules without a producer warpgroup (prefetch before
// the loop, fetch each tile). The producer warpgroup's loads are in
// producer.cuh.

// The K/V head (b·Hkv + h / (Hq / Hkv)) that query head bh = b·Hq + h reads:
// Hq = Hkv·(Hq / Hkv), so it is bh / (Hq / Hkv). The divisions sit before
// every CTA's first K/V load: without grouped heads none is made (the
// chain of two cost 3.6% at B2 H8 S512 D64, docs/perf-log.md).
__device__ __forceinline__ int kv_head(int bh, int Hq, int Hkv) {
    if (Hq == Hkv) return bh;
    return GROUP_KV_HEAD(bh, Hq, Hkv);
}

// Copies rows [row0, row0 + ROWS) of one head's Q, K or V into a tile,
// zero-filling rows at or past n_rows (the tensor's length: Sq for Q, Sk for
// K and V) so partial tiles read zeros, never memory outside the tensor.
// The trip count is a compile-time constant so the loop unrolls into straight
// copies with constant offsets (a runtime-bounded loop cost ~15 instructions
// per 16 bytes on sm_90, a fifth of the mma path's instructions).
// Whole tiles (all but a ragged last one) take the first branch, where every
// address is the thread's base plus a constant: one instruction per 16 bytes.
// SWZ writes the wgmma layout (KV_SWIZZLE): where a pass covers a multiple
// of 8 rows a thread's swizzled chunk is the same on every pass; where it
// covers fewer (D = 256: 128 threads load 4 rows a pass) each pass's address
// is swizzled again, still from constants (the pass index is unrolled).
// NT threads load (tid: this one's index among them); a swizzled tile's
// column blocks hold TILE_ROWS rows (a split group fills its BLOCK_N rows of
// a stage's KV_ROWS, from the stage's row key_off on).
// Decode tiles stream K/V once and nothing else: each 16-byte copy also asks
// L2 to fetch the 128-byte line around it (step 44 asked for 256 bytes, which
// won on an H100; on an H200 128 bytes is 2.5-3.4% faster and 256 no better
// than none: step 47).
#if DECODE
#define ATTN_CP_ASYNC "cp.async.cg.shared.global.L2::128B"
#else
#define ATTN_CP_ASYNC "cp.async.cg.shared.global"
#endif

template <int ROWS, bool SWZ = false, int NT = CONSUMER_THREADS, int TILE_ROWS = ROWS>
__device__ __forceinline__ void load_rows(attn_t* tile, const attn_t* __restrict__ src, int row0, int n_rows,
                                          unsigned tid = threadIdx.x) {
    constexpr int VEC_PER_ROW = HEAD_DIM / 8;  // 16-byte vectors
    constexpr int VECS = ROWS * VEC_PER_ROW;
    // The consumers load (with WS the producer warpgroup has its own loader).
    constexpr int ROW_STEP = NT / VEC_PER_ROW;  // rows one pass of the block covers
    constexpr int LD = SWZ ? 64 : LDH;          // elements from one row to the next
    static_assert(NT % VEC_PER_ROW == 0, "a pass of the block covers whole rows");
    const int r0 = tid / VEC_PER_ROW;
    const int cv = tid % VEC_PER_ROW;
    const int c = cv * 8;
    const attn_t* base = src + ((size_t)row0 + r0) * HEAD_DIM + c;
    attn_t* sbase = SWZ ? swizzled<TILE_ROWS>(tile, r0, cv) : ROW_AT(tile, r0, c);
    // Where the thread's j-th row of the pass lands.
    const auto dst = [&](int j) {
        if constexpr (SWZ && ROW_STEP % 8 != 0) return swizzled<TILE_ROWS>(tile, r0 + j * ROW_STEP, cv);
        // A decode tile's rows are swizzled by row % 8 (config.cuh, ROW_AT).
        if constexpr (DECODE && ROW_STEP % 8 != 0) return ROW_AT(tile, r0 + j * ROW_STEP, c);
        return sbase + j * ROW_STEP * LD;
    };
    if (row0 + ROWS <= n_rows) {
#pragma unroll
        for (int j = 0; j < (VECS + NT - 1) / NT; ++j) {
            if (VECS % NT != 0 && r0 + j * ROW_STEP >= ROWS) break;
            const attn_t* g = base + j * ROW_STEP * HEAD_DIM;
            attn_t* s = dst(j);
            if constexpr (cfg::cp_async)
                asm volatile(ATTN_CP_ASYNC " [%0], [%1], 16;\n" ::"r"(smem_addr(s)), "l"(g));
            else
                *reinterpret_cast<uint4*>(s) = *reinterpret_cast<const uint4*>(g);
        }
        return;
    }
#pragma unroll
    for (int j = 0; j < (VECS + NT - 1) / NT; ++j) {
        const int r = r0 + j * ROW_STEP;
        if (VECS % NT != 0 && r >= ROWS) break;
        const bool valid = row0 + r < n_rows;
        const attn_t* g = valid ? base + j * ROW_STEP * HEAD_DIM : src;
        attn_t* s = dst(j);
        if constexpr (cfg::cp_async)
            // src-size 0 makes cp.async write 16 zero bytes and read nothing.
            asm volatile(ATTN_CP_ASYNC " [%0], [%1], 16, %2;\n" ::"r"(smem_addr(s)), "l"(g),
                         "r"(valid ? 16 : 0));
        else
            *reinterpret_cast<uint4*>(s) = valid ? *reinterpret_cast<const uint4*>(g) : make_uint4(0, 0, 0, 0);
    }
}

__device__ __forceinline__ void cp_async_commit() {
    if constexpr (cfg::cp_async) asm volatile("cp.async.commit_group;\n" ::);
}

template <int N>
__device__ __forceinline__ void cp_async_wait() {
    if constexpr (cfg::cp_async) asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

// K/V tile t of Sk keys.
__device__ __forceinline__ void load_kv(attn_t* sK, attn_t* sV, const attn_t* __restrict__ Kh,
                                        const attn_t* __restrict__ Vh, int t, int Sk) {
    const int stage = t % KV_STAGES;
    load_rows<KV_ROWS, KV_SWIZZLE>(sK + stage * KV_TILE_HALVES, Kh, t * KV_ROWS, Sk);
    load_rows<KV_ROWS, KV_SWIZZLE>(sV + stage * KV_TILE_HALVES, Vh, t * KV_ROWS, Sk);
}

// wgmma reads shared memory through the async proxy: what this thread's
// cp.async (or stores) wrote must be made visible to it before the barrier.
__device__ __forceinline__ void kv_visible_to_wgmma() {
    if constexpr (cfg::wgmma) asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

// With three stages, tile 1 also goes out before the loop (tile 0 goes with
// Q), one commit group per tile.
__device__ __forceinline__ void prefetch_kv(attn_t* sK, attn_t* sV, const attn_t* __restrict__ Kh,
                                            const attn_t* __restrict__ Vh, int n_tiles, int Sk) {
    if constexpr (cfg::cp_async && cfg::stages > 2) {
#pragma unroll
        for (int t = 1; t < STAGES - 1; ++t) {
            if (t < n_tiles) load_kv(sK, sV, Kh, Vh, t, Sk);
            cp_async_commit();
        }
    }
}

// Makes K/V tile t resident in stage t % KV_STAGES; multi-buffered, it also
// starts tile t + STAGES - 1. The caller syncs the block after this and again
// before a stage is refilled.
__device__ __forceinline__ void fetch_kv(attn_t* sK, attn_t* sV, const attn_t* __restrict__ Kh,
                                         const attn_t* __restrict__ Vh, int t, int n_tiles, int Sk) {
    if constexpr (cfg::cp_async && cfg::stages >= 2) {
        if (t + STAGES - 1 < n_tiles) load_kv(sK, sV, Kh, Vh, t + STAGES - 1, Sk);
        // Committed even when empty, so STAGES - 1 groups always follow tile t's.
        cp_async_commit();
        cp_async_wait<STAGES - 1>();
    } else {
        // One stage: tile t replaces tile t-1 once every warp is done with it.
        if (t > 0) {
            load_kv(sK, sV, Kh, Vh, t, Sk);
            cp_async_commit();
        }
        cp_async_wait<0>();
    }
    kv_visible_to_wgmma();
}
