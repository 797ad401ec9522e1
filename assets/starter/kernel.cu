// A starter attention kernel for attnscope: O = softmax(Q·Kᵀ/√D)·V, fp16 in
// and out, fp32 accumulation, layout [B, H, S, D]. One thread owns one query
// row and walks every key once with an online softmax. Simple and slow: the
// point is a kernel you can change and watch. Save it and attnscope rebuilds
// it, checks it against an f64 reference and times it again.
//
// The ABI (docs/kernel-abi.md): the entry point's parameters below, the grid
// and block from the manifest's [launch], every -D define from its toggles and
// tile parameters (HEAD_DIM comes from the shape).
#include <cuda_fp16.h>

#ifndef HEAD_DIM
#define HEAD_DIM 64
#endif
#ifndef ROWS
#define ROWS 64  // query rows per block, one thread each (the tile parameter)
#endif
#ifndef USE_EXP2
#define USE_EXP2 0  // the toggle: exp2f on log2-scaled scores instead of expf
#endif
#ifndef INFINITY
#define INFINITY __int_as_float(0x7f800000)
#endif

extern "C" __global__ void __launch_bounds__(ROWS)
attention_fwd(const half* __restrict__ Q, const half* __restrict__ K, const half* __restrict__ V,
              half* __restrict__ O, int S, float scale_log2, int causal) {
    const int row = blockIdx.x * ROWS + threadIdx.x;
    if (row >= S) return;
    // Heads in grid y, batches in grid z (the manifest's grid says so).
    const size_t head = ((size_t)blockIdx.z * gridDim.y + blockIdx.y) * (size_t)S * HEAD_DIM;
    float q[HEAD_DIM], acc[HEAD_DIM];
#pragma unroll
    for (int d = 0; d < HEAD_DIM; ++d) {
        q[d] = __half2float(Q[head + (size_t)row * HEAD_DIM + d]);
        acc[d] = 0.f;
    }
    float m = -INFINITY, l = 0.f;
    const int end = causal ? row + 1 : S;
    for (int j = 0; j < end; ++j) {
        const half* k = K + head + (size_t)j * HEAD_DIM;
        float s = 0.f;
#pragma unroll
        for (int d = 0; d < HEAD_DIM; ++d) s += q[d] * __half2float(k[d]);
#if USE_EXP2
        s *= scale_log2;  // 1/√D · log2(e): exp2 of this is exp of the score
        const float m_new = fmaxf(m, s);
        const float corr = exp2f(m - m_new), p = exp2f(s - m_new);
#else
        s *= scale_log2 * 0.6931471805599453f;  // back to 1/√D
        const float m_new = fmaxf(m, s);
        const float corr = expf(m - m_new), p = expf(s - m_new);
#endif
        l = l * corr + p;
        const half* v = V + head + (size_t)j * HEAD_DIM;
#pragma unroll
        for (int d = 0; d < HEAD_DIM; ++d) acc[d] = acc[d] * corr + p * __half2float(v[d]);
        m = m_new;
    }
#pragma unroll
    for (int d = 0; d < HEAD_DIM; ++d) O[head + (size_t)row * HEAD_DIM + d] = __float2half(acc[d] / l);
}
