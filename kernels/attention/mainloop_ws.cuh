// The warp-specialized schedule (WS without ping-pong): the producer
// warpgroup (producer.cuh) fills three stages; a consumer waits for tile
// t + 1 on its full mbarrier and issues its Q·Kᵀ, runs the softmax and P·V
// of tile t under it, and gives the stage back on its empty mbarrier as soon
// as P·V has read it. No block barrier: consumer warpgroups drift apart.
//
// A fragment of attention_fwd's body, included where its schedule is chosen:
// it reads and writes the kernel's locals (o, l_acc, m_r, qf, the tiles, the
// row block). Not a function because a function, even force-inlined, is
// optimized on its own before it is inlined and came out as other SASS; the
// split of the kernel into parts keeps every tile's code as it was.

        wait_tile(bars, u0);
        float s[MI][NB][4];
        mma_qk(s, qf, tQ, sK + u0 % STAGES * KV_TILE_HALVES, lane);
        mask_scores(s, 0, diag0, Sk, causal, lane);
        for (int t = 0; t < n_tiles; ++t) {
            const int u = u0 + t;
            const bool more = t + 1 < n_tiles;
            float s_next[MI][NB][4];
            if (more) {
                wait_tile(bars, u + 1);
                mma_qk<false>(s_next, qf, tQ, sK + (u + 1) % STAGES * KV_TILE_HALVES, lane);
            }
            softmax_pv(s, o, l_acc, m_r, sV + (u % STAGES) * KV_TILE_HALVES, t * KV_ROWS, Sk, scale_log2, lane);
            // P·V's wait covered every wgmma reading stage u.
            release_tile(bars, u);
            if (more) take_next(s, s_next, (t + 1) * KV_ROWS, diag0, Sk, causal, lane);
        }
        if (PERSIST && !Q_REGS) mbar_arrive(q_empty_bar(bars, kb));  // every Q·Kᵀ has landed
