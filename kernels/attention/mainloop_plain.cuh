// The plain schedule (every mma tile without a producer, a three-stage
// pipeline or a stagger): per K/V tile the whole block waits for it
// (fetch_kv, one block barrier), each warp computes S = Q·Kᵀ, its softmax and
// O += P·V, and the block meets again before the stage is refilled. A split
// tile (k2…) gives each group of warps its own BLOCK_N keys of the stage.
//
// A fragment of attention_fwd's body, included where its schedule is chosen:
// it reads and writes the kernel's locals (o, l_acc, m_r, qf, the tiles, the
// row block). Not a function because a function, even force-inlined, is
// optimized on its own before it is inlined and came out as other SASS; the
// split of the kernel into parts keeps every tile's code as it was.

        for (int t = 0; t < n_tiles; ++t) {
            fetch_kv(sK, sV, Kh, Vh, t, n_tiles, Sk);
            __syncthreads();
            if (t == 0 && !Q_SMEM) load_q_fragments(qf, sQ, wrow, lane);
            const int stage = t % KV_STAGES;
            const int key0 = t * KV_ROWS + key_off;
            if (key0 < rb.kv_end) {  // warp-uniform: a causal tail may leave a group nothing
                float s[MI][NB][4];
                mma_qk(s, qf, tQ, sK + stage * KV_TILE_HALVES + key_off * KV_ROW_HALVES, lane);
                mask_scores(s, key0, diag0, Sk, causal, lane);
                softmax_pv(s, o, l_acc, m_r, sV + stage * KV_TILE_HALVES + key_off * KV_ROW_HALVES, key0, Sk,
                           scale_log2, lane);
            }
            // Every warp is done with this stage before it is refilled.
            __syncthreads();
        }
