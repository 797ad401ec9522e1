// A kernel that does nothing, with the attention ABI: what a timer reports for
// a launch with no work is its own bracket around a kernel (docs/measurement.md,
// "Nsight Compute's bracket"). Its output is never written, so its check fails.
#include <cuda_fp16.h>
#ifndef ROWS
#define ROWS 64
#endif
extern "C" __global__ void __launch_bounds__(ROWS)
attention_fwd(const half* __restrict__ Q, const half* __restrict__ K, const half* __restrict__ V,
              half* __restrict__ O, int S, float scale_log2, int causal) {
    // Never true for a real launch; keeps the parameters used.
    if (S < 0 && threadIdx.x == 0) O[0] = __float2half(scale_log2 + causal) + Q[0] + K[0] + V[0];
}
