// Row blocks: BLOCK_M queries of one head. A CTA computes one, its grid
// position, or with PERSIST a share of all B·H·⌈S / BLOCK_M⌉: its kb-th is
// item kb·gridDim.x + (its position in that round). Non-causal items are
// numbered head by head, so the CTAs running together share K/V in L2.
// Causal ones differ in work (the last row block of a head reads the most
// keys): they are numbered heaviest first, across heads, and every other
// round is dealt backwards, so each CTA's share comes out even.
#if PERSIST
// B·H, written by the host before the launch (docs/kernel-abi.md).
extern "C" __constant__ int attn_heads = 1;
#endif
struct RowBlock {
    int q0;       // first query row
    int bh;       // head: b·H + h
    size_t head;  // its first element: bh·S·HEAD_DIM
    int kv_end;   // keys it reads: S, or causal up to its diagonal
    int n_tiles;  // K/V tiles holding them
};
__device__ __forceinline__ int n_items(int S) {
#if PERSIST
    return (S + BLOCK_M - 1) / BLOCK_M * attn_heads;
#else
    return 1;
#endif
}
// The CTA's kb-th item; n_items(S) or more once it has none left.
__device__ __forceinline__ int item_of(int kb, int causal) {
#if PERSIST
    return kb * gridDim.x + (causal && (kb & 1) ? gridDim.x - 1 - blockIdx.x : blockIdx.x);
#else
    return kb;
#endif
}
__device__ __forceinline__ RowBlock row_block(int item, int S, int causal) {
    RowBlock rb;
#if PERSIST
    const int n_m = (S + BLOCK_M - 1) / BLOCK_M;
    int mb;
    if (causal) {
        rb.bh = item % attn_heads;
        mb = n_m - 1 - item / attn_heads;
    } else {
        rb.bh = item / n_m;
        mb = item % n_m;
    }
    rb.head = (size_t)rb.bh * S * HEAD_DIM;
#else
    (void)item;
    const int n_m = gridDim.x;
    rb.bh = blockIdx.z * gridDim.y + blockIdx.y;
    rb.head = ((size_t)blockIdx.z * gridDim.y + blockIdx.y) * S * HEAD_DIM;
    int mb = blockIdx.x;
    // The blocks the GPU starts first take the most keys, so the last wave
    // is light.
    if (WS && causal) mb = n_m - 1 - mb;
#endif
#if TMA
    // Causal: when S is not a multiple of BLOCK_M, the partial row block is
    // the first (the lightest) rather than the last (the heaviest, which
    // would compute a whole block's keys for a few rows): blocks end at S,
    // the first starts before row 0; TMA reads those rows as zeros, every
    // key is masked for them and they are not written.
    rb.q0 = mb * BLOCK_M - (causal ? n_m * BLOCK_M - S : 0);
#else
    rb.q0 = mb * BLOCK_M;
#endif
    rb.kv_end = causal ? min(S, rb.q0 + BLOCK_M) : S;
    rb.n_tiles = (rb.kv_end + KV_ROWS - 1) / KV_ROWS;
    return rb;
}
