// DECODE (the `d` tile flag, issue 41): split-KV decoding, flash-decoding
// style, on the mma.sync path with cp.async K/V stages. The whole kernel of
// a d tile (attention_fwd includes this instead of its own body).
//
// Rows. A CTA's BLOCK_M rows are the packed rows of one K/V head's group:
// the G = Hq / Hkv query heads of a K/V head times their Sq queries, packed
// row r being query r % Sq of query head kvh·G + r / Sq. Q and O of a group
// are one contiguous [G·Sq, D] block (heads kvh·G … kvh·G + G - 1 follow each
// other), so row r sits at r·D from the group's first element. K and V are
// read once per group instead of once per query head, and a single query
// fills G rows of the m16 tile instead of one. Each row has its own causal
// limit, (r % Sq) + Sk - Sq. Where G·Sq > BLOCK_M the group takes several
// row blocks (grid.x = row blocks × Hkv, which may pass 65535), so every
// shape stays correct.
//
// Keys. grid.y CTAs split the keys of a row block (the [launch] formula
// asks for enough to fill the GPU once, with at least DECODE_MIN_KEYS each):
// split s reads K/V tiles [s·T / n, (s + 1)·T / n) of the T the row block
// needs. Inside a CTA, the SPLIT groups of warps take BLOCK_N keys each of a
// stage (as the k tiles do) and merge through shared memory. Across CTAs the
// partial (O, running maximum, row sum) of each split goes to a static
// scratch buffer of this module, and the last CTA of a row block to arrive
// (a counter per row block, atomicInc wraps it back to 0 for the next
// launch) merges them and writes O. A grid whose partials the scratch
// cannot hold uses fewer splits (the extra CTAs exit); one split writes O
// directly.

static_assert(USE_MMA && USE_CP_ASYNC && STAGES >= 2 && !USE_WGMMA && !STAGGER && ROWS_PER_WARP == 16,
              "DECODE (d) is a tile option of mma+async tiles with 2 or 3 stages, 16 rows a warp, no g or i");

// Floats of scratch (16 MiB) and row-block counters. A slot is one split's
// partial of one row block: BLOCK_M rows of D floats of O, then (m, l) per row.
#define DECODE_SCRATCH_FLOATS (1 << 22)
#define DECODE_COUNTERS (1 << 14)
#define DECODE_SLOT_FLOATS (BLOCK_M * (HEAD_DIM + 2))
#define DECODE_SLOTS (DECODE_SCRATCH_FLOATS / DECODE_SLOT_FLOATS)
// 16-byte aligned: the merge reads float4s of O.
__device__ __align__(16) float attn_decode_scratch[DECODE_SCRATCH_FLOATS];
__device__ unsigned attn_decode_count[DECODE_COUNTERS];

// -inf for keys past Sk, and when causal past each row's own diagonal (rows
// g and g + 8 of the warp: diag_lo, diag_hi). diag_min: the least diagonal of
// the warp's 16 rows; tiles wholly before it and Sk take no compares.
__device__ __forceinline__ void mask_decode(float (&s)[MI][NB][4], int key0, int diag_lo, int diag_hi, int diag_min,
                                            int Sk, int causal, int lane) {
    const bool edge = key0 + BLOCK_N > Sk || (causal && key0 + BLOCK_N - 1 > diag_min);
    if (!edge) return;
    const int q = lane % 4;
#pragma unroll
    for (int n = 0; n < NB; ++n)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
            const int key = key0 + n * 8 + 2 * q + (e % 2);
            const int diag = e / 2 ? diag_hi : diag_lo;
            if (key >= Sk || (causal && PAST_DIAGONAL(key, diag))) s[0][n][e] = -INFINITY;
        }
}

// The planted output bugs at packed row r (query r % Sq of head kvh·G + r / Sq).
__device__ __forceinline__ float decode_inv(float inv, int r, int b, int kvh, int G, int Sq, int Hq) {
#if MUTATE_ROW || MUTATE_TILE || MUTATE_LAST_HEAD || MUTATE_LAST_BATCH || MUTATE_NORM
    return planted_inv(inv, r % Sq, b * Hq + kvh * G + r / Sq, (int)gridDim.z * Hq, Sq);
#else
    (void)r, (void)b, (void)kvh, (void)G, (void)Sq, (void)Hq;
    return inv;
#endif
}

// (m, l) of one split, or of a merged set, into (m, l): both sums rescaled
// to the larger maximum (exp2 domain); an empty set is (-inf, 0).
__device__ __forceinline__ void merge_max_sum(float& m, float& l, float m_other, float l_other) {
    const float m_new = fmaxf(m, m_other);
    const float base = m_new == -INFINITY ? 0.f : m_new;
    l = l * fast_exp2(m - base) + l_other * fast_exp2(m_other - base);
    m = m_new;
}

// The last CTA's merge of every split's O: ITEMS groups of 4 columns a
// thread (item i of thread t is column group t + i·THREADS of the row
// block's `columns`), UNROLL splits' loads issued before any is used.
// s_row: each row's maximum over the splits and its 1/l (with the planted
// bugs already in it). Og: the row block's first output row.
template <int ITEMS, int UNROLL>
__device__ __forceinline__ void merge_columns(const float* slots, const float* s_row, int nsplit, int columns,
                                              attn_t* Og) {
    constexpr int C4 = HEAD_DIM / 4;
    int r[ITEMS], c[ITEMS];
    bool ok[ITEMS];
    float4 acc[ITEMS];
#pragma unroll
    for (int i = 0; i < ITEMS; ++i) {
        const int idx = threadIdx.x + i * THREADS;
        ok[i] = idx < columns;
        r[i] = ok[i] ? idx / C4 : 0;
        c[i] = (idx % C4) * 4;
        acc[i] = make_float4(0.f, 0.f, 0.f, 0.f);
    }
    auto add = [&](int sp) {
        const float* po = slots + (size_t)sp * DECODE_SLOT_FLOATS;
#pragma unroll
        for (int i = 0; i < ITEMS; ++i)
            if (ok[i]) {
                const float w = MUTATE_SPLITS && sp == 0
                                    ? 1.f
                                    : fast_exp2(__ldcg(po + BLOCK_M * HEAD_DIM + 2 * r[i]) - s_row[2 * r[i]]);
                const float4 v = __ldcg(reinterpret_cast<const float4*>(po + r[i] * HEAD_DIM + c[i]));
                acc[i].x += w * v.x;
                acc[i].y += w * v.y;
                acc[i].z += w * v.z;
                acc[i].w += w * v.w;
            }
    };
    int sp = 0;
    for (; sp + UNROLL <= nsplit; sp += UNROLL)
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) add(sp + u);
    for (; sp < nsplit; ++sp) add(sp);
#pragma unroll
    for (int i = 0; i < ITEMS; ++i)
        if (ok[i]) {
            const float inv = s_row[2 * r[i] + 1];
            uint2 out;
            out.x = pack2(acc[i].x * inv, PLANT_COL(acc[i].y, acc[i].x, c[i] + 1) * inv);
            out.y = pack2(acc[i].z * inv, PLANT_COL(acc[i].w, acc[i].z, c[i] + 3) * inv);
            *reinterpret_cast<uint2*>(Og + (size_t)r[i] * HEAD_DIM + c[i]) = out;
        }
}

extern "C" __global__ void __launch_bounds__(THREADS, MIN_BLOCKS)
attention_fwd(const attn_t* __restrict__ Q, const attn_t* __restrict__ K, const attn_t* __restrict__ V,
              attn_t* __restrict__ O, int Sq, int Sk, int Hq, int Hkv, float scale_log2, int causal) {
    FOLD_PLAIN(Sq, Sk, Hq, Hkv);
    extern __shared__ __align__(128) unsigned char smem[];
    __shared__ int s_last;
    attn_t* sQ = reinterpret_cast<attn_t*>(smem);
    attn_t* sK = reinterpret_cast<attn_t*>(smem + SQ_BYTES);
    attn_t* sV = reinterpret_cast<attn_t*>(smem + SQ_BYTES + SKV_BYTES);

    constexpr int WARPS_PER_GROUP = WARPS / SPLIT;
    const int warp = threadIdx.x / 32;
    const int lane = threadIdx.x % 32;
    const int group = warp / WARPS_PER_GROUP;
    const int wrow = (warp % WARPS_PER_GROUP) * 16;
    const int g = lane / 4;
    const int q = lane % 4;

    // The row block: K/V head kvh of batch b, packed rows q0 … q0 + BLOCK_M - 1.
    const int G = Hq / Hkv;
    const int rows = G * Sq;
    const int n_rb = (rows + BLOCK_M - 1) / BLOCK_M;
    const int kvh = blockIdx.x / n_rb;
    const int b = blockIdx.z;
    const int q0 = (blockIdx.x % n_rb) * BLOCK_M;
    const size_t q_base = ((size_t)b * Hq + (size_t)kvh * G) * Sq * HEAD_DIM;
    const size_t kv_base = (size_t)kv_head(b * Hq + kvh * G, Hq, Hkv) * Sk * HEAD_DIM;
    const attn_t* Kh = K + kv_base;
    const attn_t* Vh = V + kv_base;
    const int shift = CAUSAL_SHIFT(Sq, Sk);
    // Keys the row block reads: causal, up to its latest row's diagonal
    // (Sq - 1's when the block holds the end of a head), with the real shift
    // (MUTATE_CAUSAL_ALIGN only moves the mask).
    const int r_last = min(q0 + BLOCK_M, rows) - 1;
    const int i_max = q0 / Sq != r_last / Sq ? Sq - 1 : r_last % Sq;
    const int kv_end = causal ? min(Sk, i_max + 1 + Sk - Sq) : Sk;
    const int n_tiles = (kv_end + KV_ROWS - 1) / KV_ROWS;

    // Splits: what the grid asks, as many as the scratch and the counters
    // hold and no more than the tiles.
    const int units = gridDim.x * gridDim.z;
    const int unit = blockIdx.z * gridDim.x + blockIdx.x;
    int nsplit = units > DECODE_COUNTERS ? 1 : min((int)gridDim.y, DECODE_SLOTS / units);
    nsplit = max(1, min(nsplit, n_tiles));
    if ((int)blockIdx.y >= nsplit) return;
    const int split = blockIdx.y;
    const int t_begin = (int)((long long)split * n_tiles / nsplit);
    const int t_end = (int)((long long)(split + 1) * n_tiles / nsplit);

    // Q and the first tile in one group, then the next STAGES - 2.
    load_rows<BLOCK_M>(sQ, Q + q_base, q0, rows);
    load_kv(sK, sV, Kh, Vh, t_begin, Sk);
    cp_async_commit();
#pragma unroll
    for (int p = 1; p < STAGES - 1; ++p) {
        if (t_begin + p < t_end) load_kv(sK, sV, Kh, Vh, t_begin + p, Sk);
        cp_async_commit();
    }

    // This warp's rows' diagonals.
    const int rw0 = q0 + wrow;
    const int diag_min = (rw0 / Sq != (rw0 + 15) / Sq ? 0 : rw0 % Sq) + shift;
    const int diag_lo = (rw0 + g) % Sq + shift;
    const int diag_hi = (rw0 + g + 8) % Sq + shift;

    unsigned qf[MI][HEAD_DIM / 16][4] = {};
    float o[MI][DB][4];
    float m_r[MI][2];
    float l_acc[MI][4];
#pragma unroll
    for (int h = 0; h < 2; ++h) m_r[0][h] = -INFINITY;
#pragma unroll
    for (int e = 0; e < 4; ++e) l_acc[0][e] = 0.f;
#pragma unroll
    for (int d = 0; d < DB; ++d)
#pragma unroll
        for (int e = 0; e < 4; ++e) o[0][d][e] = 0.f;

    const int key_off = group * BLOCK_N;
    for (int t = t_begin; t < t_end; ++t) {
        // Starts tile t + STAGES - 1, waits for tile t.
        fetch_kv(sK, sV, Kh, Vh, t, t_end, Sk);
        __syncthreads();
        if (t == t_begin) load_q_fragments(qf, sQ, wrow, lane);
        const int stage = t % KV_STAGES;
        const int key0 = t * KV_ROWS + key_off;
        if (key0 < kv_end) {
            float s[MI][NB][4];
            mma_qk(s, qf, sQ, sK + stage * KV_TILE_HALVES + key_off * KV_ROW_HALVES, lane);
            mask_decode(s, key0, diag_lo, diag_hi, diag_min, Sk, causal, lane);
            softmax_pv(s, o, l_acc, m_r, sV + stage * KV_TILE_HALVES + key_off * KV_ROW_HALVES, scale_log2, lane);
        }
        __syncthreads();
    }
    cp_async_wait<0>();

    float l_r[2] = {l_acc[0][0], l_acc[0][2]};

#if SPLIT > 1
    // The groups of warps merge into group 0 through shared memory (the
    // tiles are done with), lane by lane, as the k tiles' epilogue does.
    {
        float* merge = reinterpret_cast<float*>(smem);
        const int wi = warp % WARPS_PER_GROUP;
        if (group > 0) {
            float* dst = merge + (((group - 1) * WARPS_PER_GROUP + wi) * MERGE_REGS) * 32 + lane;
            int r = 0;
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                dst[32 * r++] = m_r[0][h];
                dst[32 * r++] = l_r[h];
            }
#pragma unroll
            for (int d = 0; d < DB; ++d)
#pragma unroll
                for (int e = 0; e < 4; ++e) dst[32 * r++] = o[0][d][e];
        }
        __syncthreads();
        if (group == 0) {
#pragma unroll 1
            for (int k = 1; k < SPLIT; ++k) {
                const float* src = merge + (((k - 1) * WARPS_PER_GROUP + wi) * MERGE_REGS) * 32 + lane;
                int r = 0;
                float a_self[2], a_other[2];
#pragma unroll
                for (int h = 0; h < 2; ++h) {
                    const float m_other = src[32 * r++];
                    const float l_other = src[32 * r++];
                    const float m_new = fmaxf(m_r[0][h], m_other);
                    const float base = m_new == -INFINITY ? 0.f : m_new;
                    a_self[h] = fast_exp2(m_r[0][h] - base);
                    a_other[h] = fast_exp2(m_other - base);
                    m_r[0][h] = m_new;
                    l_r[h] = l_r[h] * a_self[h] + l_other * a_other[h];
                }
#pragma unroll
                for (int d = 0; d < DB; ++d)
#pragma unroll
                    for (int e = 0; e < 4; ++e)
                        o[0][d][e] = o[0][d][e] * (MUTATE_MERGE ? 1.f : a_self[e / 2]) + src[32 * r++] * a_other[e / 2];
            }
        }
    }
#endif

    attn_t* Og = O + q_base;
    if (nsplit == 1) {
        // One split: O normalized and written, 16 bytes a lane.
        if (group == 0) {
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                const float l = l_r[h];
                const int row = rw0 + g + h * 8;
                const float inv = decode_inv(l > 0.f ? 1.f / l : 0.f, row, b, kvh, G, Sq, Hq);
                const bool valid = row < rows;
#pragma unroll
                for (int k = 0; k < DB / 4; ++k) {
                    unsigned a[4];
#pragma unroll
                    for (int j = 0; j < 4; ++j)
                        a[j] = pack2(o[0][4 * k + j][2 * h] * inv,
                                     PLANT_COL(o[0][4 * k + j][2 * h + 1], o[0][4 * k + j][2 * h],
                                               (4 * k + j) * 8 + 2 * q + 1) * inv);
                    const uint4 v = quad_transpose(a, q);
                    if (valid) *reinterpret_cast<uint4*>(Og + (size_t)row * HEAD_DIM + (4 * k + q) * 8) = v;
                }
            }
        }
#if INJECT_FAULT
        if (blockIdx.x == 0 && blockIdx.y == 0 && threadIdx.x == 0) O[(size_t)1 << 40] = O[0];
#endif
        return;
    }

    // Several splits: this one's partial to its slot (rows that exist), then
    // the last CTA of the row block merges every slot.
    const int n_valid = min(BLOCK_M, rows - q0);
    float* slots = attn_decode_scratch + (size_t)unit * nsplit * DECODE_SLOT_FLOATS;
    if (group == 0) {
        float* po = slots + (size_t)split * DECODE_SLOT_FLOATS;
        float* pml = po + BLOCK_M * HEAD_DIM;
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            const int r = wrow + g + h * 8;
            if (r < n_valid) {
#pragma unroll
                for (int d = 0; d < DB; ++d)
                    __stcg(reinterpret_cast<float2*>(po + r * HEAD_DIM + d * 8 + 2 * q),
                           make_float2(o[0][d][2 * h], o[0][d][2 * h + 1]));
                if (q == 0) __stcg(reinterpret_cast<float2*>(pml + 2 * r), make_float2(m_r[0][h], l_r[h]));
            }
        }
    }
    __threadfence();
    __syncthreads();
    if (threadIdx.x == 0) s_last = atomicInc(&attn_decode_count[unit], nsplit - 1) == (unsigned)(nsplit - 1);
    __syncthreads();
    if (!s_last) return;
    __threadfence();
    // The merge runs alone at the end of the call, so its L2 round trips,
    // not its bytes, set its length (step 49): each row's maximum and sum
    // first, a warp per row and a lane per split, then every column with
    // many splits' loads in flight.
    float* s_row = reinterpret_cast<float*>(smem);
    for (int r = warp; r < n_valid; r += WARPS) {
        float m = -INFINITY, l = 0.f;
        for (int sp = lane; sp < nsplit; sp += 32) {
            const float2 ml = __ldcg(reinterpret_cast<const float2*>(slots + (size_t)sp * DECODE_SLOT_FLOATS +
                                                                     BLOCK_M * HEAD_DIM + 2 * r));
            merge_max_sum(m, l, ml.x, ml.y);
        }
#pragma unroll
        for (int off = 16; off > 0; off /= 2)
            merge_max_sum(m, l, __shfl_xor_sync(0xffffffffu, m, off), __shfl_xor_sync(0xffffffffu, l, off));
        if (lane == 0) {
            s_row[2 * r] = m == -INFINITY ? 0.f : m;
            s_row[2 * r + 1] = decode_inv(l > 0.f ? 1.f / l : 0.f, q0 + r, b, kvh, G, Sq, Hq);
        }
    }
    __syncthreads();
    // As few columns a thread as the rows allow, so the loads in flight go
    // to splits rather than to columns that do not exist.
    constexpr int C4 = HEAD_DIM / 4;
    constexpr int ITEMS = (BLOCK_M * C4 + THREADS - 1) / THREADS;
    constexpr int ITEMS_UNROLL = 16 / ITEMS > 0 ? 16 / ITEMS : 1;
    const int columns = n_valid * C4;
    if (columns <= THREADS)
        merge_columns<1, 16>(slots, s_row, nsplit, columns, Og + (size_t)q0 * HEAD_DIM);
    else if (columns <= 2 * THREADS)
        merge_columns<2, 8>(slots, s_row, nsplit, columns, Og + (size_t)q0 * HEAD_DIM);
    else
        merge_columns<ITEMS, ITEMS_UNROLL>(slots, s_row, nsplit, columns, Og + (size_t)q0 * HEAD_DIM);
#if INJECT_FAULT
    if (blockIdx.x == 0 && blockIdx.y == 0 && threadIdx.x == 0) O[(size_t)1 << 40] = O[0];
#endif
}
