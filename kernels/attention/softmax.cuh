// The online softmax of one tile's scores, in registers: the running
// maximum raised only by 2^RESCALE_LOG2 at a time, O and the row sums
// rescaled when it is, P packed as the next GEMM's A operand, and the
// exponentials-first variant (EXP_FIRST). Row layout: the mma.sync
// accumulator's (see primitives.cuh), whose rows live in a quad of lanes.

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
            float mx;
            if constexpr (cfg::rowsum_fadd) {
                // A tree, not a chain: log2(NB) dependent steps instead of NB.
                float v[NB];
#pragma unroll
                for (int n = 0; n < NB; ++n) v[n] = fmaxf(s[mi][n][2 * h], s[mi][n][2 * h + 1]);
#pragma unroll
                for (int w = 1; w < NB; w *= 2)
#pragma unroll
                    for (int n = 0; n + w < NB; n += 2 * w) v[n] = fmaxf(v[n], v[n + w]);
                mx = v[0];
            } else {
                mx = -INFINITY;
#pragma unroll
                for (int n = 0; n < NB; ++n) mx = fmaxf(mx, fmaxf(s[mi][n][2 * h], s[mi][n][2 * h + 1]));
            }
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

// O and the row sums onto a raised maximum (O must not be in flight).
__device__ __forceinline__ void rescale_o(float (&o)[MI][DB][4], float (&l_acc)[MI][4], const float (&alpha)[MI][2]) {
#pragma unroll
    for (int mi = 0; mi < MI; ++mi)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
            l_acc[mi][e] *= alpha[mi][e / 2];
            if constexpr (!planted::rescale) {
#pragma unroll
                for (int d = 0; d < DB; ++d) o[mi][d][e] *= alpha[mi][e / 2];
            }
        }
}

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

// P as wgmma's A fragments (attn_t, straight from the S registers), and its
// row sums into l_acc: by mma.sync against a column of ones (every column of
// that accumulator holds its row's sum of the rounded P that meets V), or with
// ROWSUM_FADD on the FMA pipe, this thread's part of rows g (l_acc[0][0])
// and g + 8 (l_acc[0][2]), the quad's parts added once after the last tile;
// SUMS false: the caller adds them.
template <bool SUMS = true>
__device__ __forceinline__ void pack_p(const float (&s)[MI][NB][4], unsigned (&pa)[BLOCK_N / 16][4],
                                       float (&l_acc)[MI][4]) {
    if constexpr (cfg::rowsum_fadd) {
        if (SUMS) {
            float r[2];
            row_sums(s, r);
            l_acc[0][0] += r[0];
            l_acc[0][2] += r[1];
        }
    }
#pragma unroll
    for (int kk = 0; kk < BLOCK_N / 16; ++kk) {
        pa[kk][0] = pack2(s[0][2 * kk][0], s[0][2 * kk][1]);
        pa[kk][1] = pack2(s[0][2 * kk][2], s[0][2 * kk][3]);
        pa[kk][2] = pack2(s[0][2 * kk + 1][0], s[0][2 * kk + 1][1]);
        pa[kk][3] = pack2(s[0][2 * kk + 1][2], s[0][2 * kk + 1][3]);
        if constexpr (!cfg::rowsum_fadd) mma_16816(l_acc[0], pa[kk], ONES2, ONES2);
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
    return PLANTED_KEEP(!any);
}
#endif
