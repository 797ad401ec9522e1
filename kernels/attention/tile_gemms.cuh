// One tile's GEMMs on the mma path: Q's fragments, S = Q·Kᵀ (mma.sync or
// wgmma), the mask of keys past Sk or the diagonal, and O += P·V after the
// softmax (softmax_pv). Every schedule is made of these.

// This warp's Q rows as A fragments, once (Q never changes), from the
// padded Q tile, or with Q_SMEM (Q_REGS) from the swizzled one, where 16 of D
// are two 16-byte chunks.
__device__ __forceinline__ void load_q_fragments(unsigned (&qf)[MI][HEAD_DIM / 16][4], const attn_t* sQ, int wrow,
                                                 int lane) {
#pragma unroll
    for (int mi = 0; mi < MI; ++mi)
#pragma unroll
        for (int k = 0; k < HEAD_DIM / 16; ++k)
            if constexpr (cfg::q_smem)
                ldmatrix_x4(qf[mi][k], swizzled<BLOCK_M>(sQ, wrow + mi * 16 + lane % 16, 2 * k + lane / 16));
            else
                ldmatrix_x4(qf[mi][k], ROW_AT(sQ, wrow + mi * 16 + (lane % 16), k * 16 + (lane / 16) * 8));
}

// S = Q·Kᵀ for BLOCK_N keys at tK: one ldmatrix.x4 gives an 8-key block's B
// fragments for 32 columns of D. With wgmma and WAIT false the product is
// still in flight on return: s must not be read before the next wait.
// With Q_SMEM, tQ is this warpgroup's first Q row in the swizzled Q tile and
// qf is not read.
template <bool WAIT = true>
__device__ __forceinline__ void mma_qk(float (&s)[MI][NB][4], const unsigned (&qf)[MI][HEAD_DIM / 16][4],
                                       const attn_t* tQ, const attn_t* tK, int lane) {
#if USE_WGMMA
    // K-major B: 16 of D is 32 bytes inside a swizzled 128-byte row; the next
    // 64 of D are the next column block. Q (K-major A) likewise.
    float(&d)[NB * 4] = reinterpret_cast<float(&)[NB * 4]>(s[0]);
    wgmma_fence();
#pragma unroll
    for (int k = 0; k < HEAD_DIM / 16; ++k) {
        const unsigned long long kd = wgmma_desc(tK + (k / 4) * KV_ROWS * 64 + (k % 4) * 16, 16);
        if constexpr (cfg::q_smem && !cfg::q_regs)
            wgmma_ss<0>(d, wgmma_desc(tQ + (k / 4) * BLOCK_M * 64 + (k % 4) * 16, 16), kd, k > 0);
        else
            wgmma_rs<0>(d, qf[0][k], kd, k > 0);
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
            ldmatrix_x4(b, ROW_AT(tK, n * 8 + (lane % 8), k2 * 32 + (lane / 8) * 8));
#pragma unroll
            for (int mi = 0; mi < MI; ++mi) {
                mma_16816(s[mi][n], qf[mi][2 * k2], b[0], b[1]);
                mma_16816(s[mi][n], qf[mi][2 * k2 + 1], b[2], b[3]);
            }
        }
    }
#endif
}

// -inf for keys past Sk, and when causal past the query row's diagonal:
// row0 is the diagonal key of the warp's first row (diag0: its query index
// plus CAUSAL_SHIFT), the others' follow row by row. KEYS_SHIFTED (the
// pipelined loop): row0 is the query row itself and the keys are shifted
// back by `shift` to the query axis instead. Either way round is the same
// mask; each is the one that kept its loops from spilling (64x128s3w8k2 at
// 255 registers, pipelined; plain tiles lost a CTA per SM the other way).
// A template flag, and the unshifted expressions written out: even a shift
// of 0 folded away changed how the edge test compiled in the plain loops.
// Only tiles on an edge pay for the compares.
template <bool KEYS_SHIFTED = false>
__device__ __forceinline__ void mask_scores(float (&s)[MI][NB][4], int key0, int row0, int Sk, int causal, int lane,
                                            int shift = 0) {
    bool edge;
    if constexpr (KEYS_SHIFTED)
        edge = key0 + BLOCK_N > Sk || (causal && key0 - shift + BLOCK_N - 1 > row0);
    else
        edge = key0 + BLOCK_N > Sk || (causal && key0 + BLOCK_N - 1 > row0);
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
                if (key >= Sk || (causal && PAST_DIAGONAL(KEYS_SHIFTED ? key - shift : key, row))) s[mi][n][e] = -INFINITY;
            }
}

// The next tile's scores, masked, become this tile's (the pipelined loops).
template <bool KEYS_SHIFTED = false>
__device__ __forceinline__ void take_next(float (&s)[MI][NB][4], float (&s_next)[MI][NB][4], int key0, int row0,
                                          int Sk, int causal, int lane, int shift = 0) {
    mask_scores<KEYS_SHIFTED>(s_next, key0, row0, Sk, causal, lane, shift);
#pragma unroll
    for (int mi = 0; mi < MI; ++mi)
#pragma unroll
        for (int n = 0; n < NB; ++n)
#pragma unroll
            for (int e = 0; e < 4; ++e) s[mi][n][e] = s_next[mi][n][e];
}


// O += P·V issued and committed, not waited for: o and pa must not be
// touched before the next wait. MN-major B: V's rows are the 16-deep steps
// (2048 bytes apart), its 64-column blocks KV_ROWS rows apart.
__device__ __forceinline__ void pv_issue(float (&o)[MI][DB][4], const unsigned (&pa)[BLOCK_N / 16][4], const attn_t* tV) {
    float(&od)[DB * 4] = reinterpret_cast<float(&)[DB * 4]>(o[0]);
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < BLOCK_N / 16; ++kk)
        wgmma_rs<1>(od, pa[kk], wgmma_desc(tV + kk * 16 * 64, HEAD_DIM > 64 ? KV_ROWS * 128 : 1024), 1);
    wgmma_commit();
}

// One tile: the softmax of s, then O += P·V with P straight from the S
// registers (V's B fragments by ldmatrix.trans without wgmma). key0, the
// tile's first key, and Sk are read by the planted P·V bias alone.
__device__ __forceinline__ void softmax_pv(float (&s)[MI][NB][4], float (&o)[MI][DB][4], float (&l_acc)[MI][4],
                                           float (&m_r)[MI][2], const attn_t* tV, int key0, int Sk,
                                           float scale_log2, int lane) {
    float alpha[MI][2];
    if (softmax_exp(s, m_r, alpha, scale_log2)) rescale_o(o, l_acc, alpha);
    if constexpr (cfg::wgmma) {
        unsigned pa[BLOCK_N / 16][4];
        pack_p(s, pa, l_acc);
        if constexpr (planted::bias_keys)
            if (planted_keys(key0, Sk)) plant_keys(pa, s, planted_weight(key0, Sk));
        pv_issue(o, pa, tV);
        wgmma_wait<0>();
        (void)lane;
    } else {
#pragma unroll
        for (int kk = 0; kk < BLOCK_N / 16; ++kk) {
            unsigned pa[MI][4];
#pragma unroll
            for (int mi = 0; mi < MI; ++mi) {
                pa[mi][0] = pack2(s[mi][2 * kk][0], s[mi][2 * kk][1]);
                pa[mi][1] = pack2(s[mi][2 * kk][2], s[mi][2 * kk][3]);
                pa[mi][2] = pack2(s[mi][2 * kk + 1][0], s[mi][2 * kk + 1][1]);
                pa[mi][3] = pack2(s[mi][2 * kk + 1][2], s[mi][2 * kk + 1][3]);
                mma_16816(l_acc[mi], pa[mi], ONES2, ONES2);  // row sums by mma
                if constexpr (planted::bias_keys)
                    if (planted_keys(key0, Sk)) plant_keys(pa[mi], s[mi], kk, planted_weight(key0, Sk));
            }
#pragma unroll
            for (int d2 = 0; d2 < HEAD_DIM / 16; ++d2) {
                unsigned b[4];
                ldmatrix_x4_trans(b, ROW_AT(tV, kk * 16 + (lane % 8) + ((lane / 8) % 2) * 8, d2 * 16 + (lane / 16) * 8));
#pragma unroll
                for (int mi = 0; mi < MI; ++mi) {
                    mma_16816(o[mi][2 * d2], pa[mi], b[0], b[1]);
                    mma_16816(o[mi][2 * d2 + 1], pa[mi], b[2], b[3]);
                }
            }
        }
    }
}
