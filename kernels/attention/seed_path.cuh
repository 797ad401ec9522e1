// The seeds' paths: S goes through shared memory (the scalar loop or WMMA
// write it there), the softmax reads it with two lanes per row, and P·V is
// scalar or WMMA. fp16 only (config.cuh refuses ATTN_BF16 here); grouped
// K/V heads, Sk != Sq and the end-aligned causal mask are index changes.

#define COLS_PER_LANE (BLOCK_N / 32)
#define SEED_BH (int)(blockIdx.z * gridDim.y + blockIdx.y)  // b·Hq + h
#define HALF_N (BLOCK_N / 2)     // score columns per lane in the softmax
#define DCHUNKS (HEAD_DIM / 64)  // half2 output columns per lane: 2 * DCHUNKS

extern "C" __global__ void __launch_bounds__(THREADS, MIN_BLOCKS)
attention_fwd(const attn_t* __restrict__ Q, const attn_t* __restrict__ K, const attn_t* __restrict__ V,
              attn_t* __restrict__ O, int Sq, int Sk, int Hq, int Hkv, float scale_log2, int causal) {
    FOLD_PLAIN(Sq, Sk, Hq, Hkv);
    PLANT_DELAY_HERE();
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
    const size_t q_head = (size_t)SEED_BH * Sq * HEAD_DIM;
    const size_t kv_head_off = (size_t)kv_head(SEED_BH, Hq, Hkv) * Sk * HEAD_DIM;
    const half* Qh = Q + q_head;
    const half* Kh = K + kv_head_off;
    const half* Vh = V + kv_head_off;
    half* Oh = O + q_head;
    const int wrow = warp * ROWS_PER_WARP;  // first tile row of this warp
    // The softmax's view: lane % 16 is the row, lane / 16 the column half.
    // Lanes 0-7 then read rows 0-7 of one half, 4 banks apart (conflict-free).
    const int sr = lane % 16;
    const int sh = lane / 16;

    // Q tile: rows past Sq are zeros (their outputs are never written).
    {
        constexpr int VEC_PER_ROW = HEAD_DIM / 8;
        for (int i = threadIdx.x; i < BLOCK_M * VEC_PER_ROW; i += THREADS) {
            const int r = i / VEC_PER_ROW;
            const int c = (i % VEC_PER_ROW) * 8;
            const bool valid = q0 + r < Sq;
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

    // Causal: the last row's diagonal (end-aligned, tile_scheduler.cuh).
    const int kv_end = causal ? min(Sk, q0 + BLOCK_M + (Sk - Sq)) : Sk;
    const int n_tiles = (kv_end + BLOCK_N - 1) / BLOCK_N;

    load_rows<BLOCK_N>(sK, Kh, 0, Sk);
    load_rows<BLOCK_N>(sV, Vh, 0, Sk);
    cp_async_commit();
    prefetch_kv(sK, sV, Kh, Vh, n_tiles, Sk);

    for (int t = 0; t < n_tiles; ++t) {
        const int kv0 = t * BLOCK_N;
        const int stage = t % KV_STAGES;
        fetch_kv(sK, sV, Kh, Vh, t, n_tiles, Sk);
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
            const int diag = q0 + wrow + sr + CAUSAL_SHIFT(Sq, Sk);  // the row's diagonal key
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
                const bool masked = col >= Sk || (causal && PAST_DIAGONAL(col, diag));
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
#if PLANTS_KEYS
                if (planted_keys(kv0, Sk)) v[c] *= planted_weight(kv0, Sk);  // P·V's, after the row sum's
#endif
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
                for (int d = 0; d < HEAD_DIM / 2; ++d) orow[d] *= PLANTED_RESCALE(alpha);
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
            const float a = PLANTED_RESCALE(__shfl_sync(FULL_MASK, alpha, r));
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
        if (qrow < Sq) {
            const float* orow = sO + (wrow + sr) * LDO + sh * (HEAD_DIM / 2);
            half* dst = Oh + (size_t)qrow * HEAD_DIM + sh * (HEAD_DIM / 2);
#pragma unroll
            for (int d = 0; d < HEAD_DIM / 2; d += 2)
                *reinterpret_cast<half2*>(dst + d) = __float22half2_rn(
                    make_float2(PLANT_COL0(orow[d], sh * (HEAD_DIM / 2) + d) * PLANT_INV(inv, qrow, SEED_BH, Sq),
                                PLANT_COL(orow[d + 1], orow[d], sh * (HEAD_DIM / 2) + d + 1) * PLANT_INV(inv, qrow, SEED_BH, Sq)));
        }
    }
#else
#pragma unroll
    for (int r = 0; r < ROWS_PER_WARP; ++r) {
        const int qrow = q0 + wrow + r;
        const float inv_r = __shfl_sync(FULL_MASK, inv, r);
        if (qrow >= Sq) continue;
#pragma unroll
        for (int c = 0; c < DCHUNKS; ++c) {
            const float2 o = make_float2(
                PLANT_COL0(o_acc[r][c].x, 2 * lane + 64 * c) * PLANT_INV(inv_r, qrow, SEED_BH, Sq),
                PLANT_COL(o_acc[r][c].y, o_acc[r][c].x, 2 * lane + 64 * c + 1) * PLANT_INV(inv_r, qrow, SEED_BH, Sq));
            *reinterpret_cast<half2*>(Oh + (size_t)qrow * HEAD_DIM + 2 * lane + 64 * c) = __float22half2_rn(o);
        }
    }
#endif
#if INJECT_FAULT
    if (blockIdx.x == 0 && blockIdx.y == 0 && threadIdx.x == 0) O[(size_t)1 << 40] = O[0];
#endif
}
