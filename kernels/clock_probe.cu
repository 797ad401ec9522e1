// Measures the SM clock as nvbench does: clock64() cycles against
// %globaltimer nanoseconds over a short spin. One thread; out = {cycles, ns}.
extern "C" __global__ void clock_probe(unsigned long long* out, long long cycles) {
    if (threadIdx.x != 0 || blockIdx.x != 0) return;
    unsigned long long t0, t1;
    const long long c0 = clock64();
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    while (clock64() - c0 < cycles) {
    }
    const long long c1 = clock64();
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t1));
    out[0] = (unsigned long long)(c1 - c0);
    out[1] = t1 - t0;
}

// The %globaltimer's update step: spin until it changes, `n` times, and
// store each change in ns (out holds n values).
extern "C" __global__ void globaltimer_step(unsigned long long* out, int n) {
    if (threadIdx.x != 0 || blockIdx.x != 0) return;
    unsigned long long prev, now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(prev));
    for (int i = 0; i < n; ++i) {
        do {
            asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
        } while (now == prev);
        out[i] = now - prev;
        prev = now;
    }
}
