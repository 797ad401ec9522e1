// The end of a row block: each row's sum made whole, the split groups'
// partial results merged (k2…), and O normalized and written, 16 bytes a
// lane (quad_transpose in primitives.cuh).
//
// A fragment of attention_fwd's body, included where its schedule is chosen:
// it reads and writes the kernel's locals (o, l_acc, m_r, qf, the tiles, the
// row block). Not a function because a function, even force-inlined, is
// optimized on its own before it is inlined and came out as other SASS; the
// split of the kernel into parts keeps every tile's code as it was.

        float l_r[MI][2];  // full row sums, rows g and g + 8
#pragma unroll
        for (int mi = 0; mi < MI; ++mi) {
            l_r[mi][0] = l_acc[mi][0];
            l_r[mi][1] = l_acc[mi][2];
#if ROWSUM_FADD
            // Each thread summed its part of the row: add the quad's.
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                l_r[mi][h] += __shfl_xor_sync(FULL_MASK, l_r[mi][h], 1);
                l_r[mi][h] += __shfl_xor_sync(FULL_MASK, l_r[mi][h], 2);
            }
#endif
        }

#if SPLIT > 1
        // ---- Merge the groups: each lane of group k > 0 hands its registers to
        // the same lane of the matching warp of group 0 (same rows, same columns;
        // the row sums are already whole in every lane).
        {
            float* merge = reinterpret_cast<float*>(smem + MERGE_AT);
            const int wi = warp % WARPS_PER_GROUP;
            if (group > 0) {
                float* dst = merge + (((group - 1) * WARPS_PER_GROUP + wi) * MERGE_REGS) * 32 + lane;
                int r = 0;
#pragma unroll
                for (int mi = 0; mi < MI; ++mi) {
#pragma unroll
                    for (int h = 0; h < 2; ++h) {
                        dst[32 * r++] = m_r[mi][h];
                        dst[32 * r++] = l_r[mi][h];
                    }
#pragma unroll
                    for (int d = 0; d < DB; ++d)
#pragma unroll
                        for (int e = 0; e < 4; ++e) dst[32 * r++] = o[mi][d][e];
                }
            }
            __syncthreads();
            if (group > 0) return;
#pragma unroll 1
            for (int k = 1; k < SPLIT; ++k) {
                const float* src = merge + (((k - 1) * WARPS_PER_GROUP + wi) * MERGE_REGS) * 32 + lane;
                int r = 0;
#pragma unroll
                for (int mi = 0; mi < MI; ++mi) {
                    float a_self[2], a_other[2];
#pragma unroll
                    for (int h = 0; h < 2; ++h) {
                        const float m_other = src[32 * r++];
                        const float l_other = src[32 * r++];
                        const float m_new = fmaxf(m_r[mi][h], m_other);
                        const float base = m_new == -INFINITY ? 0.f : m_new;
                        a_self[h] = fast_exp2(m_r[mi][h] - base);
                        a_other[h] = fast_exp2(m_other - base);
                        m_r[mi][h] = m_new;
                        l_r[mi][h] = l_r[mi][h] * a_self[h] + l_other * a_other[h];
                    }
#pragma unroll
                    for (int d = 0; d < DB; ++d)
#pragma unroll
                        for (int e = 0; e < 4; ++e)
                            o[mi][d][e] = o[mi][d][e] * PLANTED_MERGE(a_self[e / 2]) + src[32 * r++] * a_other[e / 2];
                }
            }
        }
#endif

        // ---- Normalize and write the rows that exist.
        attn_t* Oh = O + rb.q_head;
#pragma unroll
        for (int mi = 0; mi < MI; ++mi) {
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                const float l = l_r[mi][h];
                const float inv = l > 0.f ? 1.f / l : 0.f;
                const int row = q0 + wrow + mi * 16 + g + h * 8;
                // A quad holds the same row: every lane takes part in the
                // transpose, only rows that exist are written.
                const bool valid = row < Sq && (!TMA || row >= 0);
#pragma unroll
                for (int k = 0; k < DB / 4; ++k) {
                    unsigned a[4];
#pragma unroll
                    for (int j = 0; j < 4; ++j)
                        a[j] = pack2(PLANT_COL0(o[mi][4 * k + j][2 * h], (4 * k + j) * 8 + 2 * q) *
                                         PLANT_INV(inv, row, rb.bh, Sq),
                                     PLANT_COL(o[mi][4 * k + j][2 * h + 1], o[mi][4 * k + j][2 * h],
                                               (4 * k + j) * 8 + 2 * q + 1) *
                                         PLANT_INV(inv, row, rb.bh, Sq));
                    const uint4 v = quad_transpose(a, q);
                    if (valid) *reinterpret_cast<uint4*>(Oh + (size_t)row * HEAD_DIM + (4 * k + q) * 8) = v;
                }
            }
        }
