// FlashAttention-2-style forward pass: O = softmax(Q·Kᵀ / √D) · V, one pass
// over K/V with an online softmax, fp16 in and out, fp32 accumulation.
// Layout [B, H, S, D]. Compiled at run time by NVRTC; the toggles are -D
// defines (seeds 000-004):
//   USE_WMMA      Q·Kᵀ on tensor cores; Q is staged in shared memory because
//                 WMMA fragments must load from shared or global memory, never
//                 from a register array (seed 000: those spilled to local
//                 memory and failed the sanitizer).
//   USE_WMMA_PV   P·V on tensor cores; the unnormalized P is staged in shared
//                 memory as half and O lives in shared memory as fp32, because
//                 a WMMA accumulator's row mapping is opaque and the online
//                 softmax must rescale O by row (seed 002).
//   USE_CP_ASYNC  K/V tiles arrive by 16-byte cp.async, STAGES deep, with
//                 commit/wait groups (seeds 001, 003: 8-byte cp.async is
//                 refused on sm_89, so only 16-byte copies are issued).
// Each warp owns 16 query rows (WMMA's M), so WARPS = BLOCK_M / 16.

#ifndef HEAD_DIM
#define HEAD_DIM 64
#endif
#ifndef BLOCK_M
#define BLOCK_M 64
#endif
#ifndef BLOCK_N
#define BLOCK_N 64
#endif
#ifndef STAGES
#define STAGES 2
#endif
#ifndef WARPS
#define WARPS (BLOCK_M / 16)
#endif
// Minimum resident blocks per SM that ptxas plans registers for. Without it
// ptxas picked 72-96 registers and spilled in several variants; with it each
// thread may use up to 65536 / (THREADS * MIN_BLOCKS) registers.
#ifndef MIN_BLOCKS
#define MIN_BLOCKS 1
#endif
#ifndef USE_WMMA
#define USE_WMMA 0
#endif
#ifndef USE_WMMA_PV
#define USE_WMMA_PV 0
#endif
#ifndef USE_CP_ASYNC
#define USE_CP_ASYNC 0
#endif
// Test-only: one store far out of bounds, so the GPU reports an illegal
// address (attnscope's fault-injection variant, `+fault`).
#ifndef INJECT_FAULT
#define INJECT_FAULT 0
#endif

#include <cuda_fp16.h>
#ifndef INFINITY
#define INFINITY __int_as_float(0x7f800000)
#endif
#if USE_WMMA || USE_WMMA_PV
#include <mma.h>
using namespace nvcuda;
#endif

static_assert(WARPS * 16 == BLOCK_M, "each warp owns 16 query rows: WARPS must be BLOCK_M / 16");
static_assert(BLOCK_N % 32 == 0 && BLOCK_N <= 128, "BLOCK_N must be 32, 64, 96 or 128");
static_assert(HEAD_DIM == 64 || HEAD_DIM == 128, "HEAD_DIM must be 64 or 128");
static_assert(STAGES == 1 || STAGES == 2, "STAGES must be 1 or 2");

#define THREADS (WARPS * 32)
#define ROWS_PER_WARP 16
// Padding keeps 16-byte row alignment (cp.async, uint4) and 32-byte WMMA
// fragment alignment while spreading rows over banks.
#define LDH (HEAD_DIM + 8)   // half row stride of Q, K, V tiles
#define LDS (BLOCK_N + 4)    // float row stride of the score tile
#define LDP (BLOCK_N + 8)    // half row stride of the P tile
#define LDO (HEAD_DIM + 4)   // float row stride of the O tile
#if USE_CP_ASYNC
#define KV_STAGES STAGES
#else
#define KV_STAGES 1
#endif
#define COLS_PER_LANE (BLOCK_N / 32)
#define DCHUNKS (HEAD_DIM / 64)  // half2 columns per lane = 2 * DCHUNKS... see o_acc

// Shared-memory carve-up, in bytes; every region starts 128-byte aligned.
#define ALIGN128(x) (((x) + 127) / 128 * 128)
#define SQ_BYTES ALIGN128(BLOCK_M * LDH * 2)
#define SKV_BYTES ALIGN128(KV_STAGES * BLOCK_N * LDH * 2)
#define SS_BYTES ALIGN128(BLOCK_M * LDS * 4)
#if USE_WMMA_PV
#define SP_BYTES ALIGN128(BLOCK_M * LDP * 2)
#define SO_BYTES ALIGN128(BLOCK_M * LDO * 4)
#else
#define SP_BYTES 0
#define SO_BYTES 0
#endif
#define SMEM_BYTES (SQ_BYTES + 2 * SKV_BYTES + SS_BYTES + SP_BYTES + SO_BYTES)

extern "C" __constant__ int attn_smem_bytes = SMEM_BYTES;
extern "C" __constant__ int attn_threads = THREADS;
extern "C" __constant__ int attn_block_m = BLOCK_M;
// The whole configuration, so every define set yields distinct PTX: NVRTC
// 13.0 on the GPU machine printed no PTXAS report for a PTX it had already
// assembled in the same process (single-stage variants equal the default).
extern "C" __constant__ int attn_config[8] = {HEAD_DIM, BLOCK_M, BLOCK_N, STAGES, WARPS,
                                              USE_WMMA, USE_WMMA_PV, USE_CP_ASYNC};

__device__ __forceinline__ unsigned smem_addr(const void* p) {
    return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

// Copies rows [row0, row0 + BLOCK_N) of one head's K or V into a tile,
// zero-filling rows at or past S so partial tiles read zeros, never memory
// outside the tensor.
__device__ __forceinline__ void load_kv_tile(half* tile, const half* __restrict__ src, int row0, int S) {
    constexpr int VEC_PER_ROW = HEAD_DIM / 8;  // 16-byte vectors
    for (int i = threadIdx.x; i < BLOCK_N * VEC_PER_ROW; i += THREADS) {
        const int r = i / VEC_PER_ROW;
        const int c = (i % VEC_PER_ROW) * 8;
        const bool valid = row0 + r < S;
        const half* g = src + (size_t)(valid ? row0 + r : 0) * HEAD_DIM + c;
        half* s = tile + r * LDH + c;
#if USE_CP_ASYNC
        // src-size 0 makes cp.async write 16 zero bytes and read nothing.
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_addr(s)), "l"(g),
                     "r"(valid ? 16 : 0));
#else
        *reinterpret_cast<uint4*>(s) = valid ? *reinterpret_cast<const uint4*>(g) : make_uint4(0, 0, 0, 0);
#endif
    }
}

__device__ __forceinline__ void cp_async_commit() {
#if USE_CP_ASYNC
    asm volatile("cp.async.commit_group;\n" ::);
#endif
}

template <int N>
__device__ __forceinline__ void cp_async_wait() {
#if USE_CP_ASYNC
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
#endif
}

__device__ __forceinline__ float warp_max(float v) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

extern "C" __global__ void __launch_bounds__(THREADS, MIN_BLOCKS)
attention_fwd(const half* __restrict__ Q, const half* __restrict__ K, const half* __restrict__ V,
              half* __restrict__ O, int S, float scale_log2, int causal) {
    extern __shared__ __align__(128) unsigned char smem[];
    half* sQ = reinterpret_cast<half*>(smem);
    half* sK = reinterpret_cast<half*>(smem + SQ_BYTES);
    half* sV = reinterpret_cast<half*>(smem + SQ_BYTES + SKV_BYTES);
    float* sS = reinterpret_cast<float*>(smem + SQ_BYTES + 2 * SKV_BYTES);
#if USE_WMMA_PV
    half* sP = reinterpret_cast<half*>(smem + SQ_BYTES + 2 * SKV_BYTES + SS_BYTES);
    float* sO = reinterpret_cast<float*>(smem + SQ_BYTES + 2 * SKV_BYTES + SS_BYTES + SP_BYTES);
#endif

    const int warp = threadIdx.x / 32;
    const int lane = threadIdx.x % 32;
    const int q0 = blockIdx.x * BLOCK_M;
    const size_t head = (size_t)blockIdx.y * S * HEAD_DIM;
    const half* Qh = Q + head;
    const half* Kh = K + head;
    const half* Vh = V + head;
    half* Oh = O + head;
    const int wrow = warp * ROWS_PER_WARP;  // first tile row of this warp

    // Q tile: rows past S are zeros (their outputs are never written).
    {
        constexpr int VEC_PER_ROW = HEAD_DIM / 8;
        for (int i = threadIdx.x; i < BLOCK_M * VEC_PER_ROW; i += THREADS) {
            const int r = i / VEC_PER_ROW;
            const int c = (i % VEC_PER_ROW) * 8;
            const bool valid = q0 + r < S;
            *reinterpret_cast<uint4*>(sQ + r * LDH + c) =
                valid ? *reinterpret_cast<const uint4*>(Qh + (size_t)(q0 + r) * HEAD_DIM + c) : make_uint4(0, 0, 0, 0);
        }
    }

    // Online-softmax state, replicated in every lane of the warp; indices are
    // compile-time after unrolling, so these stay in registers.
    float m_i[ROWS_PER_WARP];
    float l_i[ROWS_PER_WARP];
#pragma unroll
    for (int r = 0; r < ROWS_PER_WARP; ++r) {
        m_i[r] = -INFINITY;
        l_i[r] = 0.f;
    }
#if USE_WMMA_PV
    for (int i = lane; i < ROWS_PER_WARP * HEAD_DIM; i += 32) {
        sO[(wrow + i / HEAD_DIM) * LDO + i % HEAD_DIM] = 0.f;
    }
#else
    // Lane owns output columns 2*lane, 2*lane+1 (+64 per chunk of 64).
    float2 o_acc[ROWS_PER_WARP][DCHUNKS];
#pragma unroll
    for (int r = 0; r < ROWS_PER_WARP; ++r)
#pragma unroll
        for (int c = 0; c < DCHUNKS; ++c) o_acc[r][c] = make_float2(0.f, 0.f);
#endif

    const int kv_end = causal ? min(S, q0 + BLOCK_M) : S;
    const int n_tiles = (kv_end + BLOCK_N - 1) / BLOCK_N;

    load_kv_tile(sK, Kh, 0, S);
    load_kv_tile(sV, Vh, 0, S);
    cp_async_commit();

    for (int t = 0; t < n_tiles; ++t) {
        const int kv0 = t * BLOCK_N;
        const int stage = t % KV_STAGES;
#if USE_CP_ASYNC && STAGES == 2
        if (t + 1 < n_tiles) {
            const int next = (t + 1) % KV_STAGES;
            load_kv_tile(sK + next * BLOCK_N * LDH, Kh, kv0 + BLOCK_N, S);
            load_kv_tile(sV + next * BLOCK_N * LDH, Vh, kv0 + BLOCK_N, S);
            cp_async_commit();
            cp_async_wait<1>();
        } else {
            cp_async_wait<0>();
        }
#else
        // One stage: tile t replaces tile t-1 once every warp is done with it
        // (the barrier at the end of the previous iteration).
        if (t > 0) {
            load_kv_tile(sK, Kh, kv0, S);
            load_kv_tile(sV, Vh, kv0, S);
            cp_async_commit();
        }
        cp_async_wait<0>();
#endif
        __syncthreads();
        const half* tK = sK + stage * BLOCK_N * LDH;
        const half* tV = sV + stage * BLOCK_N * LDH;

        // ---- S = Q·Kᵀ for this warp's 16 rows, into sS (raw dot products).
#if USE_WMMA
        for (int n = 0; n < BLOCK_N / 16; ++n) {
            wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
            wmma::fill_fragment(acc, 0.f);
#pragma unroll
            for (int k = 0; k < HEAD_DIM / 16; ++k) {
                wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> a;
                wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> b;
                wmma::load_matrix_sync(a, sQ + wrow * LDH + k * 16, LDH);
                wmma::load_matrix_sync(b, tK + n * 16 * LDH + k * 16, LDH);
                wmma::mma_sync(acc, a, b, acc);
            }
            wmma::store_matrix_sync(sS + wrow * LDS + n * 16, acc, LDS, wmma::mem_row_major);
        }
        __syncwarp();
#else
        {
            float s_acc[ROWS_PER_WARP][COLS_PER_LANE];
#pragma unroll
            for (int r = 0; r < ROWS_PER_WARP; ++r)
#pragma unroll
                for (int c = 0; c < COLS_PER_LANE; ++c) s_acc[r][c] = 0.f;
// Unrolling deeper makes ptxas spill (seen on sm_90, D=128 and BLOCK_N=32).
#pragma unroll 2
            for (int k = 0; k < HEAD_DIM; k += 2) {
                float2 kv[COLS_PER_LANE];
#pragma unroll
                for (int c = 0; c < COLS_PER_LANE; ++c)
                    kv[c] = __half22float2(*reinterpret_cast<const half2*>(tK + (lane + 32 * c) * LDH + k));
#pragma unroll
                for (int r = 0; r < ROWS_PER_WARP; ++r) {
                    const float2 q = __half22float2(*reinterpret_cast<const half2*>(sQ + (wrow + r) * LDH + k));
#pragma unroll
                    for (int c = 0; c < COLS_PER_LANE; ++c) s_acc[r][c] += q.x * kv[c].x + q.y * kv[c].y;
                }
            }
#pragma unroll
            for (int r = 0; r < ROWS_PER_WARP; ++r)
#pragma unroll
                for (int c = 0; c < COLS_PER_LANE; ++c) sS[(wrow + r) * LDS + lane + 32 * c] = s_acc[r][c];
        }
        __syncwarp();
#endif

        // ---- Online softmax over this tile, row by row; P replaces S.
#pragma unroll
        for (int r = 0; r < ROWS_PER_WARP; ++r) {
            const int qrow = q0 + wrow + r;
            float v[COLS_PER_LANE];
            float tile_max = -INFINITY;
#pragma unroll
            for (int c = 0; c < COLS_PER_LANE; ++c) {
                const int col = kv0 + lane + 32 * c;
                const bool masked = col >= S || (causal && col > qrow);
                v[c] = masked ? -INFINITY : sS[(wrow + r) * LDS + lane + 32 * c] * scale_log2;
                tile_max = fmaxf(tile_max, v[c]);
            }
            tile_max = warp_max(tile_max);
            const float m_new = fmaxf(m_i[r], tile_max);
            // A row with nothing unmasked yet keeps p = 0 rather than NaN.
            const float base = m_new == -INFINITY ? 0.f : m_new;
            const float alpha = exp2f(m_i[r] - base);
            float row_sum = 0.f;
#pragma unroll
            for (int c = 0; c < COLS_PER_LANE; ++c) {
                const float p = exp2f(v[c] - base);
                row_sum += p;
#if USE_WMMA_PV
                sP[(wrow + r) * LDP + lane + 32 * c] = __float2half(p);
#else
                sS[(wrow + r) * LDS + lane + 32 * c] = p;
#endif
            }
            row_sum = warp_sum(row_sum);
            l_i[r] = l_i[r] * alpha + row_sum;
            m_i[r] = m_new;
#if USE_WMMA_PV
            for (int d = lane; d < HEAD_DIM; d += 32) sO[(wrow + r) * LDO + d] *= alpha;
#else
#pragma unroll
            for (int c = 0; c < DCHUNKS; ++c) {
                o_acc[r][c].x *= alpha;
                o_acc[r][c].y *= alpha;
            }
#endif
        }
        __syncwarp();

        // ---- O += P·V.
#if USE_WMMA_PV
        // Unrolled, ptxas spills 16 B at D=64 (sm_80..sm_90, NVRTC 13.0).
#pragma unroll 1
        for (int d = 0; d < HEAD_DIM / 16; ++d) {
            wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
            wmma::load_matrix_sync(acc, sO + wrow * LDO + d * 16, LDO, wmma::mem_row_major);
#pragma unroll
            for (int k = 0; k < BLOCK_N / 16; ++k) {
                wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> a;
                wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::row_major> b;
                wmma::load_matrix_sync(a, sP + wrow * LDP + k * 16, LDP);
                wmma::load_matrix_sync(b, tV + k * 16 * LDH + d * 16, LDH);
                wmma::mma_sync(acc, a, b, acc);
            }
            wmma::store_matrix_sync(sO + wrow * LDO + d * 16, acc, LDO, wmma::mem_row_major);
        }
#else
#pragma unroll 2
        for (int j = 0; j < BLOCK_N; ++j) {
            float2 vv[DCHUNKS];
#pragma unroll
            for (int c = 0; c < DCHUNKS; ++c)
                vv[c] = __half22float2(*reinterpret_cast<const half2*>(tV + j * LDH + 2 * lane + 64 * c));
#pragma unroll
            for (int r = 0; r < ROWS_PER_WARP; ++r) {
                const float p = sS[(wrow + r) * LDS + j];
#pragma unroll
                for (int c = 0; c < DCHUNKS; ++c) {
                    o_acc[r][c].x += p * vv[c].x;
                    o_acc[r][c].y += p * vv[c].y;
                }
            }
        }
#endif
        // Every warp is done with this stage before it is refilled.
        __syncthreads();
    }

    // ---- Normalize and write the rows that exist.
#if USE_WMMA_PV
    __syncwarp();
#pragma unroll
    for (int r = 0; r < ROWS_PER_WARP; ++r) {
        const int qrow = q0 + wrow + r;
        if (qrow >= S) continue;
        const float inv = 1.f / l_i[r];
        for (int d = 2 * lane; d < HEAD_DIM; d += 64) {
            const float2 o = make_float2(sO[(wrow + r) * LDO + d] * inv, sO[(wrow + r) * LDO + d + 1] * inv);
            *reinterpret_cast<half2*>(Oh + (size_t)qrow * HEAD_DIM + d) = __float22half2_rn(o);
        }
    }
#else
#pragma unroll
    for (int r = 0; r < ROWS_PER_WARP; ++r) {
        const int qrow = q0 + wrow + r;
        if (qrow >= S) continue;
        const float inv = 1.f / l_i[r];
#pragma unroll
        for (int c = 0; c < DCHUNKS; ++c) {
            const float2 o = make_float2(o_acc[r][c].x * inv, o_acc[r][c].y * inv);
            *reinterpret_cast<half2*>(Oh + (size_t)qrow * HEAD_DIM + 2 * lane + 64 * c) = __float22half2_rn(o);
        }
    }
#endif
#if INJECT_FAULT
    if (blockIdx.x == 0 && blockIdx.y == 0 && threadIdx.x == 0) O[(size_t)1 << 40] = O[0];
#endif
}
