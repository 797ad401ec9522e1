// The memory roof of the speed-of-light panel: how fast a plain kernel moves
// bytes through DRAM on this GPU, as STREAM's copy measures it. Buffers many
// times the L2 so every byte crosses DRAM; 16-byte streaming loads and
// stores (evict-first: the copy is never read back); four loads in flight
// per thread before their stores, so the memory system has enough requests
// to reach its peak with a grid of a few CTAs per SM.
extern "C" __global__ void copy_bw(const uint4* __restrict__ src, uint4* __restrict__ dst,
                                   unsigned long long n) {
    const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    for (; i + 3 * stride < n; i += 4 * stride) {
        const uint4 a = __ldcs(src + i);
        const uint4 b = __ldcs(src + i + stride);
        const uint4 c = __ldcs(src + i + 2 * stride);
        const uint4 d = __ldcs(src + i + 3 * stride);
        __stcs(dst + i, a);
        __stcs(dst + i + stride, b);
        __stcs(dst + i + 2 * stride, c);
        __stcs(dst + i + 3 * stride, d);
    }
    for (; i < n; i += stride) __stcs(dst + i, __ldcs(src + i));
}

// The read-only roof beside it: decode reads its K/V cache and writes almost
// nothing, and reads alone stream faster than a copy's mix of reads and
// writes. Every word is loaded; the sum is stored only if it matches a
// pattern zeros never make, so no load can be dropped.
extern "C" __global__ void read_bw(const uint4* __restrict__ src, unsigned long long n,
                                   unsigned int* sink) {
    const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    uint4 acc = make_uint4(0, 0, 0, 0);
    for (; i + 3 * stride < n; i += 4 * stride) {
        const uint4 a = __ldcs(src + i);
        const uint4 b = __ldcs(src + i + stride);
        const uint4 c = __ldcs(src + i + 2 * stride);
        const uint4 d = __ldcs(src + i + 3 * stride);
        acc.x ^= a.x ^ b.x ^ c.x ^ d.x;
        acc.y ^= a.y ^ b.y ^ c.y ^ d.y;
        acc.z ^= a.z ^ b.z ^ c.z ^ d.z;
        acc.w ^= a.w ^ b.w ^ c.w ^ d.w;
    }
    for (; i < n; i += stride) {
        const uint4 v = __ldcs(src + i);
        acc.x ^= v.x;
        acc.y ^= v.y;
        acc.z ^= v.z;
        acc.w ^= v.w;
    }
    if ((acc.x ^ acc.y ^ acc.z ^ acc.w) == 0x9E3779B9u) sink[0] = 1u;
}
