// Row blocks: BLOCK_M queries of one head. A CTA computes one, its grid
// position, or with PERSIST a share of all B·Hq·⌈Sq / BLOCK_M⌉: its kb-th is
// item kb·gridDim.x + (its position in that round). Non-causal items are
// numbered head by head, so the CTAs running together share K/V in L2.
// Causal ones differ in work (the last row block of a head reads the most
// keys): they are numbered heaviest first, across heads, and every other
// round is dealt backwards, so each CTA's share comes out even.
#if PERSIST
// B·Hq, written by the host before the launch (docs/kernel-abi.md).
extern "C" __constant__ int attn_heads = 1;
#endif
struct RowBlock {
    int q0;          // first query row
    int bh;          // query head: b·Hq + h
    int kv_bh;       // the K/V head it reads: b·Hkv + h / (Hq / Hkv)
    size_t q_head;   // the query head's first element in Q and O: bh·Sq·HEAD_DIM
    size_t kv_head;  // the K/V head's in K and V: kv_bh·Sk·HEAD_DIM
    int kv_end;      // keys it reads: Sk, or causal up to its last row's diagonal
    int n_tiles;     // K/V tiles holding them
};
__device__ __forceinline__ int n_items(int Sq) {
#if PERSIST
    return (Sq + BLOCK_M - 1) / BLOCK_M * attn_heads;
#else
    return 1;
#endif
}
// The CTA's kb-th item; n_items(Sq) or more once it has none left.
__device__ __forceinline__ int item_of(int kb, int causal) {
#if PERSIST
    return kb * gridDim.x + (causal && (kb & 1) ? gridDim.x - 1 - blockIdx.x : blockIdx.x);
#else
    return kb;
#endif
}
__device__ __forceinline__ RowBlock row_block(int item, int Sq, int Sk, int Hq, int Hkv, int causal) {
    RowBlock rb;
#if PERSIST
    const int n_m = (Sq + BLOCK_M - 1) / BLOCK_M;
    int mb;
    if (causal) {
        rb.bh = item % attn_heads;
        mb = n_m - 1 - item / attn_heads;
    } else {
        rb.bh = item / n_m;
        mb = item % n_m;
    }
#else
    (void)item;
    const int n_m = gridDim.x;
    rb.bh = blockIdx.z * gridDim.y + blockIdx.y;
    int mb = blockIdx.x;
    // The blocks the GPU starts first take the most keys, so the last wave
    // is light.
    if (WS && causal) mb = n_m - 1 - mb;
#endif
    rb.kv_bh = kv_head(rb.bh, Hq, Hkv);
    rb.q_head = (size_t)rb.bh * Sq * HEAD_DIM;
    rb.kv_head = (size_t)rb.kv_bh * Sk * HEAD_DIM;
#if TMA
    // Causal: when Sq is not a multiple of BLOCK_M, the partial row block is
    // the first (the lightest) rather than the last (the heaviest, which
    // would compute a whole block's keys for a few rows): blocks end at Sq,
    // the first starts before row 0; TMA reads those rows as zeros, and
    // they are not written (whatever keys they see: their diagonal may lie
    // past key 0 when Sk > Sq).
    rb.q0 = mb * BLOCK_M - (causal ? n_m * BLOCK_M - Sq : 0);
#else
    rb.q0 = mb * BLOCK_M;
#endif
    // Causal: the block's last row sees keys up to its diagonal,
    // q0 + BLOCK_M - 1 + (Sk - Sq) (the end alignment), never past Sk - 1.
    // MUTATE_CAUSAL_ALIGN leaves this alone: the keys its start-aligned
    // mask hides are still read, and masked.
    rb.kv_end = causal ? min(Sk, rb.q0 + BLOCK_M + (Sk - Sq)) : Sk;
    rb.n_tiles = (rb.kv_end + KV_ROWS - 1) / KV_ROWS;
    return rb;
}
