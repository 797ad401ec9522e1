// Evicts everything from L2 the way `ncu --cache-control all` leaves it:
// nothing of the previous launch's data cached, and nothing dirty. A memset
// of a big buffer would evict too, but it leaves L2 full of dirty lines whose
// write-backs then land inside the measured kernel (DRAM writes it never
// made). Reading a buffer twice the L2's size leaves only clean lines.
extern "C" __global__ void l2_scrub(const uint4* __restrict__ buf, unsigned long long n,
                                    unsigned int* sink) {
    uint4 acc = make_uint4(0, 0, 0, 0);
    const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += stride) {
        const uint4 v = __ldcg(buf + i);
        acc.x ^= v.x;
        acc.y ^= v.y;
        acc.z ^= v.z;
        acc.w ^= v.w;
    }
    // The buffer is zeros, so this never stores; the compiler cannot know
    // that, so it keeps every load.
    if ((acc.x ^ acc.y ^ acc.z ^ acc.w) == 0x9E3779B9u) sink[0] = 1u;
}
