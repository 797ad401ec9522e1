// rowwarp: a second attention kernel for attnscope, of another design than
// kernels/attention.cu: no tensor cores, no tiles of the score matrix. A warp
// owns ROWS query rows; each lane holds HEAD_DIM/32 dimensions of each row's
// q and output, a key's score is a warp-wide sum (five shuffles), and the
// online softmax runs in registers. Only K and V are shared, optionally
// staged in shared memory by the whole block (USE_SMEM_KV).
// O = softmax(Q·Kᵀ/√D)·V, fp16 in and out, fp32 accumulation, layout
// [B, H, S, D]; the kernel ABI is docs/kernel-abi.md.
#include <cuda_fp16.h>

#ifndef HEAD_DIM
#define HEAD_DIM 64
#endif
#ifndef ROWS
#define ROWS 2  // query rows per warp: each K/V row loaded serves them all
#endif
#ifndef WARPS
#define WARPS 4  // warps per block
#endif
#ifndef KV
#define KV 32  // keys per shared-memory tile (USE_SMEM_KV only)
#endif
#ifndef USE_SMEM_KV
#define USE_SMEM_KV 0
#endif
#ifndef USE_EXP2
#define USE_EXP2 0
#endif
#ifndef MUTATE_RESCALE
#define MUTATE_RESCALE 0  // test-only: O is not rescaled when a row's maximum rises
#endif
#ifndef INFINITY
#define INFINITY __int_as_float(0x7f800000)
#endif

static_assert(HEAD_DIM == 64 || HEAD_DIM == 128, "HEAD_DIM must be 64 or 128");
#define PER_LANE (HEAD_DIM / 32)  // dimensions per lane: 2 or 4, read as half2
#define BLOCK_ROWS (ROWS * WARPS)
#define SMEM_BYTES (USE_SMEM_KV ? 2 * KV * HEAD_DIM * 2 : 0)

// The manifest computes the same; attnscope checks that they agree.
extern "C" __constant__ int attn_smem_bytes = SMEM_BYTES;

__device__ __forceinline__ float warp_sum(float x) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) x += __shfl_xor_sync(0xffffffffu, x, o);
    return x;
}

// One key for every row of the warp: the score by a warp-wide sum, then
// each row's online-softmax update of the lane's dimensions.
__device__ __forceinline__ void step(float (&q)[ROWS][PER_LANE], float (&acc)[ROWS][PER_LANE],
                                     float (&m)[ROWS], float (&l)[ROWS], const half* k,
                                     const half* v, int j, int row0, int causal, int lane) {
    float kf[PER_LANE], vf[PER_LANE];
#pragma unroll
    for (int i = 0; i < PER_LANE; i += 2) {
        const float2 a = __half22float2(*reinterpret_cast<const half2*>(k + lane * PER_LANE + i));
        const float2 b = __half22float2(*reinterpret_cast<const half2*>(v + lane * PER_LANE + i));
        kf[i] = a.x;
        kf[i + 1] = a.y;
        vf[i] = b.x;
        vf[i + 1] = b.y;
    }
#pragma unroll
    for (int r = 0; r < ROWS; ++r) {
        float s = 0.f;
#pragma unroll
        for (int i = 0; i < PER_LANE; ++i) s += q[r][i] * kf[i];
        s = warp_sum(s);
        // Masked keys leave the row as it is (the same for the whole warp).
        const bool keep = !(causal && j > row0 + r);
        const float m_new = keep ? fmaxf(m[r], s) : m[r];
#if USE_EXP2
        const float corr = exp2f(m[r] - m_new), p = keep ? exp2f(s - m_new) : 0.f;
#else
        const float corr = expf(m[r] - m_new), p = keep ? expf(s - m_new) : 0.f;
#endif
        l[r] = l[r] * corr + p;
#pragma unroll
        for (int i = 0; i < PER_LANE; ++i) {
#if MUTATE_RESCALE
            acc[r][i] = acc[r][i] + p * vf[i];
#else
            acc[r][i] = acc[r][i] * corr + p * vf[i];
#endif
        }
        m[r] = m_new;
    }
}

extern "C" __global__ void
attention_fwd(const half* __restrict__ Q, const half* __restrict__ K, const half* __restrict__ V,
              half* __restrict__ O, int S, float scale_log2, int causal) {
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    // Heads in grid y, batches in grid z (the manifest's grid).
    const size_t head = ((size_t)blockIdx.z * gridDim.y + blockIdx.y) * (size_t)S * HEAD_DIM;
    const half* Kh = K + head;
    const half* Vh = V + head;
    const int row0 = blockIdx.x * BLOCK_ROWS + warp * ROWS;
#if USE_EXP2
    const float scale = scale_log2;  // exp2 of a log2-scaled score is its exp
#else
    const float scale = scale_log2 * 0.6931471805599453f;  // 1/√D
#endif
    float q[ROWS][PER_LANE], acc[ROWS][PER_LANE], m[ROWS], l[ROWS];
#pragma unroll
    for (int r = 0; r < ROWS; ++r) {
        // A row past S computes row S-1 again and is never stored.
        const int row = min(row0 + r, S - 1);
        const half* qr = Q + head + (size_t)row * HEAD_DIM + lane * PER_LANE;
#pragma unroll
        for (int i = 0; i < PER_LANE; i += 2) {
            const float2 f = __half22float2(*reinterpret_cast<const half2*>(qr + i));
            q[r][i] = f.x * scale;
            q[r][i + 1] = f.y * scale;
            acc[r][i] = acc[r][i + 1] = 0.f;
        }
        m[r] = -INFINITY;
        l[r] = 0.f;
    }
    const int last = min(row0 + ROWS - 1, S - 1);
    const int end = causal ? last + 1 : S;  // this warp's keys
#if USE_SMEM_KV
    extern __shared__ __align__(16) half smem[];
    half* sK = smem;
    half* sV = smem + KV * HEAD_DIM;
    // Every warp walks the block's tiles (the barriers need all of them).
    const int block_last = min((int)(blockIdx.x * BLOCK_ROWS + BLOCK_ROWS - 1), S - 1);
    const int block_end = causal ? block_last + 1 : S;
    for (int t0 = 0; t0 < block_end; t0 += KV) {
        const int n = min(KV, block_end - t0);
        __syncthreads();
        // 16-byte copies; rows past the last key are zeros, never read.
        for (int c = threadIdx.x; c < KV * HEAD_DIM / 8; c += WARPS * 32) {
            const int kr = c / (HEAD_DIM / 8), kc = c % (HEAD_DIM / 8) * 8;
            uint4 kz = make_uint4(0, 0, 0, 0), vz = kz;
            if (kr < n) {
                kz = *reinterpret_cast<const uint4*>(Kh + (size_t)(t0 + kr) * HEAD_DIM + kc);
                vz = *reinterpret_cast<const uint4*>(Vh + (size_t)(t0 + kr) * HEAD_DIM + kc);
            }
            *reinterpret_cast<uint4*>(sK + kr * HEAD_DIM + kc) = kz;
            *reinterpret_cast<uint4*>(sV + kr * HEAD_DIM + kc) = vz;
        }
        __syncthreads();
        const int stop = min(n, end - t0);
        for (int j = 0; j < stop; ++j) step(q, acc, m, l, sK + j * HEAD_DIM, sV + j * HEAD_DIM, t0 + j, row0, causal, lane);
    }
#else
    for (int j = 0; j < end; ++j) step(q, acc, m, l, Kh + (size_t)j * HEAD_DIM, Vh + (size_t)j * HEAD_DIM, j, row0, causal, lane);
#endif
#pragma unroll
    for (int r = 0; r < ROWS; ++r) {
        const int row = row0 + r;
        if (row >= S) continue;
        const float inv = 1.f / l[r];
        half* o = O + head + (size_t)row * HEAD_DIM + lane * PER_LANE;
#pragma unroll
        for (int i = 0; i < PER_LANE; i += 2)
            *reinterpret_cast<half2*>(o + i) = __floats2half2_rn(acc[r][i] * inv, acc[r][i + 1] * inv);
    }
}
