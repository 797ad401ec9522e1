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

// The last CTA's merge in one round of loads where it can: a thread takes
// VEC columns of one row (item i of thread t: column group t + i·THREADS of
// the row block's `groups`) and, UNROLL splits at a time, loads each
// split's (m, l) with its VEC columns of O before using any, rescaling as
// the running maximum grows. No pass over the rows first, no barrier.
template <int VEC, int ITEMS, int UNROLL>
__device__ __forceinline__ void merge_splits(const float* slots, int nsplit, int groups, attn_t* Og, int q0, int b,
                                             int kvh, int G, int Sq, int Hq) {
    constexpr int CGS = HEAD_DIM / VEC;
    constexpr int V4 = VEC / 4;
    int r[ITEMS], c[ITEMS];
    bool ok[ITEMS];
    float m[ITEMS], l[ITEMS];
    float4 acc[ITEMS][V4];
#pragma unroll
    for (int i = 0; i < ITEMS; ++i) {
        const int idx = threadIdx.x + i * THREADS;
        ok[i] = idx < groups;
        r[i] = ok[i] ? idx / CGS : 0;
        c[i] = (idx % CGS) * VEC;
        m[i] = -INFINITY;
        l[i] = 0.f;
#pragma unroll
        for (int k = 0; k < V4; ++k) acc[i][k] = make_float4(0.f, 0.f, 0.f, 0.f);
    }
    for (int sp0 = 0; sp0 < nsplit; sp0 += UNROLL) {
        float2 ml[ITEMS][UNROLL];
        float4 v[ITEMS][UNROLL][V4];
#pragma unroll
        for (int u = 0; u < UNROLL; ++u)
#pragma unroll
            for (int i = 0; i < ITEMS; ++i) {
                const float* po = slots + (size_t)(sp0 + u) * DECODE_SLOT_FLOATS;
                const bool in = ok[i] && sp0 + u < nsplit;
                ml[i][u] = in ? __ldcg(reinterpret_cast<const float2*>(po + BLOCK_M * HEAD_DIM + 2 * r[i]))
                              : make_float2(-INFINITY, 0.f);
#pragma unroll
                for (int k = 0; k < V4; ++k)
                    v[i][u][k] = in ? __ldcg(reinterpret_cast<const float4*>(po + r[i] * HEAD_DIM + c[i] + 4 * k))
                                    : make_float4(0.f, 0.f, 0.f, 0.f);
            }
#pragma unroll
        for (int i = 0; i < ITEMS; ++i) {
            float mc = m[i];
#pragma unroll
            for (int u = 0; u < UNROLL; ++u) mc = fmaxf(mc, ml[i][u].x);
            const float base = mc == -INFINITY ? 0.f : mc;
            const float a = fast_exp2(m[i] - base);
            const float ao = PLANTED_ROUNDS(a, sp0);
            l[i] *= a;
#pragma unroll
            for (int k = 0; k < V4; ++k) {
                acc[i][k].x *= ao;
                acc[i][k].y *= ao;
                acc[i][k].z *= ao;
                acc[i][k].w *= ao;
            }
#pragma unroll
            for (int u = 0; u < UNROLL; ++u) {
                const float w = fast_exp2(ml[i][u].x - base);
                const float wo = PLANTED_SPLITS(w, sp0 + u);
                l[i] += w * ml[i][u].y;
#pragma unroll
                for (int k = 0; k < V4; ++k) {
                    acc[i][k].x += wo * v[i][u][k].x;
                    acc[i][k].y += wo * v[i][u][k].y;
                    acc[i][k].z += wo * v[i][u][k].z;
                    acc[i][k].w += wo * v[i][u][k].w;
                }
            }
            m[i] = mc;
        }
    }
#pragma unroll
    for (int i = 0; i < ITEMS; ++i)
        if (ok[i]) {
            const float inv = decode_inv(l[i] > 0.f ? 1.f / l[i] : 0.f, q0 + r[i], b, kvh, G, Sq, Hq);
            unsigned out[2 * V4];
#pragma unroll
            for (int k = 0; k < V4; ++k) {
                const int col = c[i] + 4 * k;
                out[2 * k] =
                    pack2(PLANT_COL0(acc[i][k].x, col) * inv, PLANT_COL(acc[i][k].y, acc[i][k].x, col + 1) * inv);
                out[2 * k + 1] = pack2(acc[i][k].z * inv, PLANT_COL(acc[i][k].w, acc[i][k].z, col + 3) * inv);
            }
            attn_t* dst = Og + (size_t)r[i] * HEAD_DIM + c[i];
            if constexpr (V4 == 2)
                *reinterpret_cast<uint4*>(dst) = make_uint4(out[0], out[1], out[2], out[3]);
            else
                *reinterpret_cast<uint2*>(dst) = make_uint2(out[0], out[1]);
        }
}

extern "C" __global__ void __launch_bounds__(THREADS, MIN_BLOCKS)
attention_fwd(const attn_t* __restrict__ Q, const attn_t* __restrict__ K, const attn_t* __restrict__ V,
              attn_t* __restrict__ O, int Sq, int Sk, int Hq, int Hkv, float scale_log2, int causal) {
    FOLD_PLAIN(Sq, Sk, Hq, Hkv);
    PLANT_DELAY_HERE();
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
    // Slots are placed by the grid's count: under the causal mask row blocks
    // hold different numbers of tiles, so their own counts differ.
    const int slots_per_unit = units > DECODE_COUNTERS ? 1 : min((int)gridDim.y, DECODE_SLOTS / units);
    const int nsplit = max(1, min(slots_per_unit, n_tiles));
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
            softmax_pv(s, o, l_acc, m_r, sV + stage * KV_TILE_HALVES + key_off * KV_ROW_HALVES, key0, Sk, scale_log2,
                       lane);
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
                        o[0][d][e] = o[0][d][e] * PLANTED_MERGE(a_self[e / 2]) + src[32 * r++] * a_other[e / 2];
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
                        a[j] = pack2(PLANT_COL0(o[0][4 * k + j][2 * h], (4 * k + j) * 8 + 2 * q) * inv,
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
    float* slots = attn_decode_scratch + (size_t)unit * PLANTED_SLOTS(nsplit, slots_per_unit) * DECODE_SLOT_FLOATS;
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
    // Published as cooperative groups' grid barrier does: the block's
    // stores before a barrier, then one thread's fence and atomic (and,
    // for the last CTA, a fence before the barrier its merge waits at).
    __syncthreads();
    if (threadIdx.x == 0) {
        __threadfence();
        s_last = atomicInc(&attn_decode_count[unit], nsplit - 1) == (unsigned)(nsplit - 1);
        if (s_last) __threadfence();
    }
    __syncthreads();
    if (!s_last) return;
    // The merge runs alone at the end of the call, so its L2 round trips,
    // not its bytes, set its length: one round where the columns allow.
    attn_t* Og_rb = Og + (size_t)q0 * HEAD_DIM;
    if (n_valid * (HEAD_DIM / 4) <= THREADS)
        merge_splits<4, 1, 16>(slots, nsplit, n_valid * (HEAD_DIM / 4), Og_rb, q0, b, kvh, G, Sq, Hq);
    else if (n_valid * (HEAD_DIM / 8) <= THREADS)
        merge_splits<8, 1, 16>(slots, nsplit, n_valid * (HEAD_DIM / 8), Og_rb, q0, b, kvh, G, Sq, Hq);
    else {
        // Many rows (several queries): ITEMS column groups a thread and
        // 16 / ITEMS splits of each in flight.
        constexpr int ITEMS = (BLOCK_M * HEAD_DIM / 8 + THREADS - 1) / THREADS;
        merge_splits<8, ITEMS, (16 / ITEMS > 0 ? 16 / ITEMS : 1)>(slots, nsplit, n_valid * (HEAD_DIM / 8), Og_rb, q0,
                                                                  b, kvh, G, Sq, Hq);
    }
#if INJECT_FAULT
    if (blockIdx.x == 0 && blockIdx.y == 0 && threadIdx.x == 0) O[(size_t)1 << 40] = O[0];
#endif
}
