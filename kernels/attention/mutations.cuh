// Test-only code, kept out of the production headers (issue 58): the
// planted bugs that prove the correctness oracle has teeth (MUTATE_*,
// `selftest --mutations`), the planted slowdown (PLANT_DELAY) and the
// injected fault (INJECT_FAULT), with the hooks the production code calls.
// With every define 0 each hook is the expression it wraps, so the shipped
// builds compile to the same machine code as before the hooks existed
// (scripts/sass_same.sh). Included after primitives.cuh: the planted P
// fragments pack with pack2.

// Test-only: one store far out of bounds, so the GPU reports an illegal
// address (attnscope's fault-injection variant, `+fault`).
#ifndef INJECT_FAULT
#define INJECT_FAULT 0
#endif
// Test-only: a planted slowdown (issue 55). Every thread of every CTA spins
// PLANT_DELAY SM cycles before it does anything else, so each CTA starts
// that much later: a known edit of the kernel's speed, `y` in a tile
// (mma+async@64x128s2w8k2giy330), raced to show the smallest difference a
// race calls. Spun by one thread while the others issued their first loads,
// or where a CTA ends, the delay hid behind memory latency up to a few
// hundred cycles in the seeds' kernel (run162, run163). At 0 the macro is
// empty and the build is the shipped one.
#ifndef PLANT_DELAY
#define PLANT_DELAY 0
#endif
#if PLANT_DELAY
#define PLANT_DELAY_HERE()                                          \
    do {                                                            \
        const long long plant_t0 = clock64();                       \
        while (clock64() - plant_t0 < (long long)PLANT_DELAY) {     \
        }                                                           \
    } while (0)
#else
#define PLANT_DELAY_HERE() \
    do {                   \
    } while (0)
#endif
// Test-only mutations that prove the correctness oracle has teeth
// (`selftest --mutations`): MUTATE_RESCALE leaves O unscaled when a row's
// running maximum rises; MUTATE_MERGE forgets to rescale the first group's
// O when split groups merge; MUTATE_EXP_FIRST makes an EXP_FIRST tile keep
// its exponentials whatever the row sums say. Localized errors a pooled
// bound would dilute (issue 37), each 1% where it says so: MUTATE_ROW one
// query row (Sq / 2 of head 0); MUTATE_TILE the last 64-row tile of every
// head; MUTATE_LAST_HEAD the last head (b·Hq + h = B·Hq - 1); MUTATE_LAST_BATCH
// every head of the last batch (the grid's z, so not PERSIST); MUTATE_COLUMN
// writes column D - 2's value into column D - 1; MUTATE_CAUSAL lets each row
// see one key past the diagonal; MUTATE_NORM drops the final 1/l;
// MUTATE_KV_HEAD has query head h read KV head h % Hkv instead of
// h / (Hq / Hkv) (grouped-query attention); MUTATE_CAUSAL_ALIGN aligns the
// causal diagonal to the start (key j masked past query j) instead of the
// end (past query j - (Sk - Sq)); MUTATE_SPLITS has a d tile's last CTA add
// the first split's O unscaled (weight 1 against the largest maximum of the
// first batch of splits it loads; the row sums stay right) when it merges the
// splits, which changes O where a later split of that batch holds a row's
// larger maximum; MUTATE_SLOTS places a row block's split slots by its own
// split count rather than the grid's (the bug `selftest --calibrate` found in
// the d tiles: under the causal mask row blocks split their keys in different
// counts, so their slots overlap); MUTATE_ROUNDS leaves the merged O
// unrescaled when a later round of split loads raises a row's maximum (more
// splits than one round loads). Systematic errors (issue 56), each a factor 1 + δ
// (BIAS_DELTA: 0.05% in fp16, 0.3% in bf16), far inside every row's bound:
// only a check that sees an error of one sign over many rows can catch them
// (rounding's errors average out there, these add up). MUTATE_BIAS_HEAD the
// last head (as MUTATE_LAST_HEAD); MUTATE_BIAS_COLUMN column 0 of every row;
// MUTATE_BIAS_KEYS weights the n keys of the first key tile (key < BLOCK_N)
// by 1 + δ·Sk/n in P·V but not in the row sums: a row that sees every key
// moves by δ times those keys' mean V over its own (δ where V's mean is not
// 0, as in offset inputs), whatever share of the keys the tile holds;
// MUTATE_BIAS_TAIL the same for the keys of a ragged last tile (key >=
// Sk / BLOCK_N · BLOCK_N; none when BLOCK_N divides Sk). With all of them 0
// the macros below expand to the expressions they wrap, so the shipped builds
// compile to the same code as before.
#ifndef MUTATE_RESCALE
#define MUTATE_RESCALE 0
#endif
#ifndef MUTATE_MERGE
#define MUTATE_MERGE 0
#endif
#ifndef MUTATE_EXP_FIRST
#define MUTATE_EXP_FIRST 0
#endif
#ifndef MUTATE_ROW
#define MUTATE_ROW 0
#endif
#ifndef MUTATE_TILE
#define MUTATE_TILE 0
#endif
#ifndef MUTATE_LAST_HEAD
#define MUTATE_LAST_HEAD 0
#endif
#ifndef MUTATE_LAST_BATCH
#define MUTATE_LAST_BATCH 0
#endif
#ifndef MUTATE_COLUMN
#define MUTATE_COLUMN 0
#endif
#ifndef MUTATE_CAUSAL
#define MUTATE_CAUSAL 0
#endif
#ifndef MUTATE_NORM
#define MUTATE_NORM 0
#endif
#ifndef MUTATE_KV_HEAD
#define MUTATE_KV_HEAD 0
#endif
#ifndef MUTATE_CAUSAL_ALIGN
#define MUTATE_CAUSAL_ALIGN 0
#endif
#ifndef MUTATE_SPLITS
#define MUTATE_SPLITS 0
#endif
#ifndef MUTATE_SLOTS
#define MUTATE_SLOTS 0
#endif
#ifndef MUTATE_ROUNDS
#define MUTATE_ROUNDS 0
#endif
#ifndef MUTATE_BIAS_HEAD
#define MUTATE_BIAS_HEAD 0
#endif
#ifndef MUTATE_BIAS_COLUMN
#define MUTATE_BIAS_COLUMN 0
#endif
#ifndef MUTATE_BIAS_KEYS
#define MUTATE_BIAS_KEYS 0
#endif
#ifndef MUTATE_BIAS_TAIL
#define MUTATE_BIAS_TAIL 0
#endif
#define PLANTS_OUTPUT (MUTATE_ROW || MUTATE_TILE || MUTATE_LAST_HEAD || MUTATE_LAST_BATCH || MUTATE_NORM || MUTATE_BIAS_HEAD)
#define PLANTS_KEYS (MUTATE_BIAS_KEYS || MUTATE_BIAS_TAIL)

// For `if constexpr` (enumerators, as cfg's: no constant-bank slot).
namespace planted {
enum : bool {
    rescale = MUTATE_RESCALE != 0,
    bias_keys = PLANTS_KEYS != 0,
};
}  // namespace planted

// The merges' and rescales' factors, each 1 where its bug is planted:
// MUTATE_MERGE the first group's own factor when split groups merge;
// MUTATE_ROUNDS a later round's (sp0 > 0) factor in a d tile's merge;
// MUTATE_SPLITS the first split's weight; MUTATE_RESCALE the seeds' path's
// O rescale. MUTATE_EXP_FIRST keeps an exponentials-first tile's P whatever
// its row sums say; MUTATE_SLOTS places a d tile's split slots by its own
// split count rather than the grid's.
#define PLANTED_MERGE(a) (MUTATE_MERGE ? 1.f : (a))
#define PLANTED_ROUNDS(a, sp0) (MUTATE_ROUNDS && (sp0) > 0 ? 1.f : (a))
#define PLANTED_SPLITS(w, split) (MUTATE_SPLITS && (split) == 0 ? 1.f : (w))
#define PLANTED_RESCALE(alpha) (MUTATE_RESCALE ? 1.f : (alpha))
#define PLANTED_KEEP(kept) (MUTATE_EXP_FIRST || (kept))
#define PLANTED_SLOTS(own, grid) (MUTATE_SLOTS ? (own) : (grid))

static_assert(!(MUTATE_LAST_BATCH && PERSIST), "MUTATE_LAST_BATCH reads the batch from the grid's z: not a PERSIST tile");
// The systematic errors' δ: at most one unit in the last place of P or O
// (fp16's is 2^-11 to 2^-10 of a value, bf16's 2^-8 to 2^-7), so a value
// rounds up or not and the mean moves by δ.
#if ATTN_BF16
#define BIAS_DELTA 0.003f
#else
#define BIAS_DELTA 0.0005f
#endif
// The planted output bugs, as a row's 1/l. `heads`: B·Hq.
#if PLANTS_OUTPUT
__device__ __forceinline__ float planted_inv(float inv, int row, int bh, int heads, int Sq) {
    const bool off = (MUTATE_ROW && bh == 0 && row == Sq / 2) || (MUTATE_TILE && row >= (Sq - 1) / 64 * 64) ||
                     (MUTATE_LAST_HEAD && bh == heads - 1) || (MUTATE_LAST_BATCH && blockIdx.z == gridDim.z - 1);
    const bool biased = MUTATE_BIAS_HEAD && bh == heads - 1;
    return MUTATE_NORM ? 1.f : off ? inv * 1.01f : biased ? inv * (1.f + BIAS_DELTA) : inv;
}
#define PLANT_INV(inv, row, bh, Sq) planted_inv(inv, row, bh, HEADS_TOTAL, Sq)
#else
#define PLANT_INV(inv, row, bh, Sq) (inv)
#endif
#if PERSIST
#define HEADS_TOTAL attn_heads
#else
#define HEADS_TOTAL (int)(gridDim.y * gridDim.z)
#endif
// An output value, or with MUTATE_COLUMN its left neighbour's in column D - 1.
#if MUTATE_COLUMN
#define PLANT_COL(value, left, col) ((col) == HEAD_DIM - 1 ? (left) : (value))
#else
#define PLANT_COL(value, left, col) (value)
#endif
// An output value in column `col`, or with MUTATE_BIAS_COLUMN column 0's
// times 1 + δ (a column's own value: the even column of a pair).
#if MUTATE_BIAS_COLUMN
#define PLANT_COL0(value, col) ((col) == 0 ? (value) * (1.f + BIAS_DELTA) : (value))
#else
#define PLANT_COL0(value, col) (value)
#endif
// Whether P·V weights the BLOCK_N keys from key0 by 1 + δ, the row sums
// taking them as they are: with MUTATE_BIAS_KEYS the first tile (keys below
// BLOCK_N), with MUTATE_BIAS_TAIL a ragged last one (keys from
// Sk / BLOCK_N · BLOCK_N: the tile that passes Sk). Every loop's tiles start
// at a multiple of BLOCK_N, so a tile is planted whole or not at all. A
// function in every build (the mma path asks under `if constexpr`); nothing
// asks with both 0.
__device__ __forceinline__ bool planted_keys(int key0, int Sk) {
    return (MUTATE_BIAS_KEYS && key0 == 0) || (MUTATE_BIAS_TAIL && key0 + BLOCK_N > Sk);
}
// A planted tile's weight, 1 + δ·Sk/n for its n keys: its share of a row
// that sees every key is n/Sk, so the row moves by δ, not by δ·n/Sk (a tail
// of 13 keys in 333 moved O 0.005%, under what rounding hides: run182).
__device__ __forceinline__ float planted_weight(int key0, int Sk) {
    return 1.f + BIAS_DELTA * (float)Sk / (float)min(BLOCK_N, Sk - key0);
}
// Whether a key lies past a query row's diagonal (causal); `row` is the
// query's diagonal key, its index shifted by CAUSAL_SHIFT.
#if MUTATE_CAUSAL
#define PAST_DIAGONAL(key, row) ((key) > (row) + 1)
#else
#define PAST_DIAGONAL(key, row) ((key) > (row))
#endif
// Causal attention is aligned to the end: query i of Sq sees keys up to
// i + Sk - Sq, so the last query sees every key (decode, Sq = 1, sees all
// Sk). The host guarantees Sq <= Sk when causal.
#if MUTATE_CAUSAL_ALIGN
#define CAUSAL_SHIFT(Sq, Sk) 0
#else
#define CAUSAL_SHIFT(Sq, Sk) ((Sk) - (Sq))
#endif
// The K/V head of query head bh = b·Hq + h in a group of Hq / Hkv
// (kv_head in loads.cuh): with MUTATE_KV_HEAD, h % Hkv instead.
#if MUTATE_KV_HEAD
#define GROUP_KV_HEAD(bh, Hq, Hkv) ((bh) / (Hq) * (Hkv) + (bh) % (Hq) % (Hkv))
#else
#define GROUP_KV_HEAD(bh, Hq, Hkv) ((bh) / ((Hq) / (Hkv)))
#endif

// The planted output bugs at packed row r (query r % Sq of head kvh·G + r / Sq).
__device__ __forceinline__ float decode_inv(float inv, int r, int b, int kvh, int G, int Sq, int Hq) {
#if PLANTS_OUTPUT
    return planted_inv(inv, r % Sq, b * Hq + kvh * G + r / Sq, (int)gridDim.z * Hq, Sq);
#else
    (void)r, (void)b, (void)kvh, (void)G, (void)Sq, (void)Hq;
    return inv;
#endif
}

#if USE_MMA
// MUTATE_BIAS_KEYS, MUTATE_BIAS_TAIL: the A fragment of P for keys
// 16·kk … 16·kk + 15 of a planted tile (planted_keys), packed again times
// its weight (planted_weight) once the row sums have taken it as pack_p
// packed it.
__device__ __forceinline__ void plant_keys(unsigned (&pa)[4], const float (&s)[NB][4], int kk, float w) {
    pa[0] = pack2(s[2 * kk][0] * w, s[2 * kk][1] * w);
    pa[1] = pack2(s[2 * kk][2] * w, s[2 * kk][3] * w);
    pa[2] = pack2(s[2 * kk + 1][0] * w, s[2 * kk + 1][1] * w);
    pa[3] = pack2(s[2 * kk + 1][2] * w, s[2 * kk + 1][3] * w);
}

// The same for a whole tile's P as pack_p left it (wgmma, one m-tile).
__device__ __forceinline__ void plant_keys(unsigned (&pa)[BLOCK_N / 16][4], const float (&s)[MI][NB][4], float w) {
#pragma unroll
    for (int kk = 0; kk < BLOCK_N / 16; ++kk) plant_keys(pa[kk], s[0], kk, w);
}
#endif
