// The software-pipelined schedule (three cp.async stages, no producer).
//
// A fragment of attention_fwd's body, included where its schedule is chosen:
// it reads and writes the kernel's locals (o, l_acc, m_r, qf, the tiles, the
// row block). Not a function because a function, even force-inlined, is
// optimized on its own before it is inlined and came out as other SASS; the
// split of the kernel into parts keeps every tile's code as it was.

        // Software-pipelined: while a warp runs the softmax and P·V of tile t,
        // Q·Kᵀ of tile t + 1 is issued from the same basic block, so the tensor
        // pipe and the MUFU/ALU chains overlap inside one warp. Tiles t + 1 and
        // t + 2 are in flight, hence three stages.
        cp_async_wait<1>();
        kv_visible_to_wgmma();
        __syncthreads();
        if (!Q_SMEM) load_q_fragments(qf, sQ, wrow, lane);
        float s[MI][NB][4];
        mma_qk(s, qf, tQ, sK + key_off * KV_ROW_HALVES, lane);
        // Rows on the query axis, keys shifted to it (mask_scores says why).
        const int shift = CAUSAL_SHIFT(Sq, Sk);
        (void)diag0;
        mask_scores<true>(s, key_off, q0 + wrow, Sk, causal, lane, shift);
        for (int t = 0; t < n_tiles; ++t) {
            if (t + 2 < n_tiles) load_kv(sK, sV, Kh, Vh, t + 2, Sk);
            cp_async_commit();
            cp_async_wait<1>();  // tile t + 1 is resident
            kv_visible_to_wgmma();
            __syncthreads();
            // Q·Kᵀ of the next tile, if there is one (a stage past the last tile
            // holds nothing this row block needs). With wgmma it runs under this
            // tile's softmax: P·V's wait covers it. `more` is block-uniform.
            const bool more = t + 1 < n_tiles;
            float s_next[MI][NB][4];
            if (more)
                mma_qk<false>(s_next, qf, tQ, sK + ((t + 1) % KV_STAGES) * KV_TILE_HALVES + key_off * KV_ROW_HALVES, lane);
            softmax_pv(s, o, l_acc, m_r, sV + (t % KV_STAGES) * KV_TILE_HALVES + key_off * KV_ROW_HALVES,
                       t * KV_ROWS + key_off, Sk, scale_log2, lane);
            if (more) take_next<true>(s, s_next, (t + 1) * KV_ROWS + key_off, q0 + wrow, Sk, causal, lane, shift);
            // Every warp is done with tile t before its stage is refilled.
            __syncthreads();
        }
