// The staggered split schedule (STAGGER, two stages split 2 to 8 ways): each
// group of warps loads its own keys of the next stage and meets only its own
// named barrier, and group k starts once group k - 1's first Q·Kᵀ has
// landed (stagger_bar, stagger_wait in primitives.cuh), so one group's
// softmax runs under another's GEMMs.
//
// A fragment of attention_fwd's body, included where its schedule is chosen:
// it reads and writes the kernel's locals (o, l_acc, m_r, qf, the tiles, the
// row block). Not a function because a function, even force-inlined, is
// optimized on its own before it is inlined and came out as other SASS; the
// split of the kernel into parts keeps every tile's code as it was.

        constexpr int GROUP_THREADS = WARPS_PER_GROUP * 32;
        const unsigned gtid = threadIdx.x % GROUP_THREADS;
        for (int t = 0; t < n_tiles; ++t) {
            // This group's rows of tile t + 1, into the stage tile t - 1 held.
            if (t + 1 < n_tiles) {
                const int st = (t + 1) % KV_STAGES;
                const int r0 = (t + 1) * KV_ROWS + key_off;
                load_rows<BLOCK_N, KV_SWIZZLE, GROUP_THREADS, KV_ROWS>(
                    sK + st * KV_TILE_HALVES + key_off * KV_ROW_HALVES, Kh, r0, Sk, gtid);
                load_rows<BLOCK_N, KV_SWIZZLE, GROUP_THREADS, KV_ROWS>(
                    sV + st * KV_TILE_HALVES + key_off * KV_ROW_HALVES, Vh, r0, Sk, gtid);
            }
            cp_async_commit();
            cp_async_wait<1>();
            kv_visible_to_wgmma();
            // Tile 0 and Q came by every thread; later tiles by the group.
            if (t == 0)
                __syncthreads();
            else
                asm volatile("bar.sync %0, %1;\n" ::"r"(1 + group), "n"(GROUP_THREADS) : "memory");
            if (t == 0 && !Q_SMEM) load_q_fragments(qf, sQ, wrow, lane);
            const int stage = t % KV_STAGES;
            const int key0 = t * KV_ROWS + key_off;
            // Group k > 0 waits for group k - 1's first Q·Kᵀ (or its having none).
            if (t == 0 && group > 0) stagger_wait(stagger_bar(smem, group));
            if (key0 < rb.kv_end) {  // warp-uniform: a causal tail may leave a group nothing
                float s[MI][NB][4];
                mma_qk(s, qf, tQ, sK + stage * KV_TILE_HALVES + key_off * KV_ROW_HALVES, lane);
                if (t == 0 && group + 1 < SPLIT) mbar_arrive(stagger_bar(smem, group + 1));
                mask_scores(s, key0, diag0, Sk, causal, lane);
                softmax_pv(s, o, l_acc, m_r, sV + stage * KV_TILE_HALVES + key_off * KV_ROW_HALVES, key0, Sk,
                           scale_log2, lane);
            } else if (t == 0 && group + 1 < SPLIT) {
                mbar_arrive(stagger_bar(smem, group + 1));
            }
            // The group is done with its rows of this stage before it refills them.
            asm volatile("bar.sync %0, %1;\n" ::"r"(1 + group), "n"(GROUP_THREADS) : "memory");
        }
