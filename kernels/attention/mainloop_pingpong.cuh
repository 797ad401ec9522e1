// The ping-pong schedule (PINGPONG: WS with two or three consumer
// warpgroups), FlashAttention-3's: the warpgroups take turns at the tensor
// cores, and each runs its softmax while the others' GEMMs run.
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
                                                 const unsigned (&qf)[MI][HEAD_DIM / 16][4], const attn_t* tQ, const attn_t* sK, const attn_t* sV, unsigned bars,
                                                 int u0, int kb, int n_tiles, int diag0, int Sk, int causal,
                                                 float scale_log2, int wg, int lane) {
    // Warpgroup 0 goes first: the last hands it the first turn. Every pass
    // is matched by a wait (the last warpgroup skips its last pass).
    if (wg == CONSUMER_GROUPS - 1) turn_pass(wg);
    float s[MI][NB][4];
    float alpha[MI][2];
    unsigned pa[BLOCK_N / 16][4];
    wait_tile(bars, u0);
    mma_qk(s, qf, tQ, sK + u0 % STAGES * KV_TILE_HALVES, lane);
    mask_scores(s, 0, diag0, Sk, causal, lane);
    softmax_exp(s, m_r, alpha, scale_log2);  // O and the row sums are still 0
    pack_p(s, pa, l_acc);
    if constexpr (planted::bias_keys)
        if (planted_keys(0, Sk)) plant_keys(pa, s, planted_weight(0, Sk));
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
        mask_scores(s, (t + 1) * KV_ROWS, diag0, Sk, causal, lane);
#if EXP_FIRST
        float r[2];
        const bool kept = exp_first(s, m_r, r, scale_log2, wg);
        bool raised = false;
        if (!kept) {
            // S again from the K tile still held (P·V lands meanwhile).
            mma_qk(s, qf, tQ, sK + (u + 1) % STAGES * KV_TILE_HALVES, lane);
            mask_scores(s, (t + 1) * KV_ROWS, diag0, Sk, causal, lane);
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
        if constexpr (planted::bias_keys)
            if (planted_keys((t + 1) * KV_ROWS, Sk)) plant_keys(pa, s, planted_weight((t + 1) * KV_ROWS, Sk));
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
