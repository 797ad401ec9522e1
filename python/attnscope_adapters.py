"""attnscope_adapters: the attention libraries attnscope ships as `py:` variants.

attnscope embeds this file and installs it as the module `attnscope_adapters`,
so `py:attnscope_adapters:sdpa_flash` (and the other names in ADAPTERS) run
inside the GPU worker next to attnscope's own CUDA variants.

Contract (the same for a user's own function):

    fn(q, k, v)               q [B, Hq, Sq, D], k and v [B, Hkv, Sk, D]
    fn(q, k, v, causal=True)  only when the problem is causal

  * contiguous CUDA tensors, torch.float16 or torch.bfloat16;
  * grouped-query heads: query head h reads KV head h // (Hq // Hkv);
  * causal is END-aligned (bottom-right): query i sees keys j <= i + Sk - Sq;
  * softmax scale 1/sqrt(D);
  * returns o [B, Hq, Sq, D] (any strides), same dtype;
  * runs on the current stream (attnscope's), never synchronizes.

`fn.attnscope_supports(problem)` returns None when fn can run the problem
(a dict b, hq, hkv, sq, sk, d, dtype="fp16"|"bf16", causal), else a short
reason. Anything an adapter cannot compute correctly, or only with extra
kernels of its own making (copies, casts, repeat_interleave), is refused there.

What must be built once per problem (a compiled function, a block mask, a
FlashInfer plan) is cached here by problem, so a timed call launches only the
library's attention kernel(s).

This module imports only the standard library at import time: torch, triton
and the attention libraries are imported inside functions, so `doctor()`
works (and says what is missing) on a machine without them.
"""

import importlib
import linecache
import math
import sys
import warnings

__all__ = ["ADAPTERS", "doctor", "problem_of"]


# ---------------------------------------------------------------------------
# Shared helpers
# ---------------------------------------------------------------------------

def _version_tuple(text):
    """'2.5.1+cu124' -> (2, 5, 1); unparsable parts stop the tuple."""
    out = []
    for part in str(text).split("+")[0].split("."):
        digits = ""
        for ch in part:
            if ch.isdigit():
                digits += ch
            else:
                break
        if not digits:
            break
        out.append(int(digits))
        if digits != part:
            break
    return tuple(out)


def _import(name):
    """The module, or None when it (or something it needs) cannot be imported."""
    try:
        return importlib.import_module(name)
    except Exception:  # ImportError, or a binary extension failing to load
        return None


def _import_error(name):
    try:
        importlib.import_module(name)
        return None
    except Exception as e:  # noqa: BLE001 - any failure means "not usable"
        return "%s: %s" % (type(e).__name__, str(e).splitlines()[0] if str(e) else "")


def _unloadable(name, what):
    """None when module `name` imports, else why not: `what` is not installed,
    or is there and fails to load (a binary built for another torch, say)."""
    err = _import_error(name)
    if err is None:
        return None
    if err.startswith("ModuleNotFoundError") and name in err:
        return "%s is not installed" % what
    return "%s does not load: %s" % (what, err)


_CUDA_STATE = None


def _torch_reason():
    """None when torch with a CUDA device is usable, else why not."""
    global _CUDA_STATE
    if _CUDA_STATE is None:
        torch = _import("torch")
        if torch is None:
            _CUDA_STATE = "torch is not installed"
        elif not torch.cuda.is_available():
            _CUDA_STATE = "torch %s sees no CUDA device" % torch.__version__
        elif getattr(torch.version, "hip", None):
            _CUDA_STATE = "torch %s is a ROCm build; these adapters are checked on CUDA only" % torch.__version__
        else:
            _CUDA_STATE = ""
    return _CUDA_STATE or None


def _torch_version():
    import torch

    return _version_tuple(torch.__version__)


def _capability():
    import torch

    return torch.cuda.get_device_capability()


def problem_of(q, k, causal=False):
    """The problem dict of a call (the shape of attnscope_supports' argument)."""
    import torch

    b, hq, sq, d = q.shape
    return dict(b=int(b), hq=int(hq), hkv=int(k.shape[1]), sq=int(sq), sk=int(k.shape[2]),
                d=int(d), dtype="bf16" if q.dtype == torch.bfloat16 else "fp16",
                causal=bool(causal))


def _key(q, k, causal):
    """Cache key of a call: everything a cached object may depend on."""
    return (tuple(q.shape), int(k.shape[1]), int(k.shape[2]), q.dtype, bool(causal), q.device)


def _masked(p):
    """Whether the causal mask removes anything: with Sq == 1 the one query
    row sees every key (j <= Sk - 1), so the problem is plain attention."""
    return bool(p["causal"]) and p["sq"] > 1


def _common_reason(p):
    """Refusals every adapter shares (shape sanity, torch, device)."""
    if p["hkv"] <= 0 or p["hq"] % p["hkv"] != 0:
        return "Hq=%d is not a multiple of Hkv=%d" % (p["hq"], p["hkv"])
    if p["dtype"] not in ("fp16", "bf16"):
        return "dtype %s: the adapters take fp16 or bf16" % p["dtype"]
    if p["causal"] and p["sq"] > p["sk"]:
        return ("causal needs Sq <= Sk (bottom-right alignment leaves the first "
                "Sq - Sk query rows without a key)")
    return _torch_reason()


def _is_pow2(n):
    return n > 0 and (n & (n - 1)) == 0


def _supports(fn):
    """Decorator: attach `check(problem) -> None | reason` as fn.attnscope_supports."""
    def wrap(check):
        def supports(problem):
            try:
                return _common_reason(problem) or check(problem)
            except Exception as e:  # a bug or an API change must not crash the caller
                return "cannot tell (%s: %s)" % (type(e).__name__, e)
        fn.attnscope_supports = supports
        return check
    return wrap


# ---------------------------------------------------------------------------
# PyTorch SDPA, one backend at a time
# ---------------------------------------------------------------------------
#
# Facts (torch main, aten/src/ATen/native/transformers/cuda/sdp_utils.cpp and
# torch/nn/attention/bias.py):
#  * `is_causal=True` is TOP-LEFT aligned; the flash backend refuses it when
#    Sq != Sk (check_flash_causal_non_square_seqlens). END-aligned causal with
#    Sq < Sk goes through torch.nn.attention.bias.causal_lower_right(Sq, Sk):
#    CausalBias._dispatch calls the flash op with is_causal=True (the FA2
#    kernel is bottom-right: "for this particular op it means lower right") or
#    _efficient_attention_forward with custom_mask_type LOWER_RIGHT, and only
#    otherwise materializes a mask (math backend; disabled under sdpa_kernel,
#    so it errors instead of computing slowly). We refuse that case up front.
#  * flash: q, k, v last dim equal and <= 256; not a multiple of 8 is padded
#    with copies (refused here). GQA native with enable_gqa=True (torch >= 2.5).
#  * efficient: last dim a multiple of 8 (fp16/bf16 on sm80+); GQA only in
#    recent torch (torch main's can_use_mem_efficient_attention has
#    supports_gqa = true); older ones refuse, which torch's own predicate
#    below reports.
# The final word is torch's own predicate (torch.backends.cuda.can_use_*),
# evaluated under the same sdpa_kernel context; its warnings become the reason.

_SDPA_CACHE = {}


def _sdpa_backend(which):
    from torch.nn.attention import SDPBackend

    return {"flash": SDPBackend.FLASH_ATTENTION, "efficient": SDPBackend.EFFICIENT_ATTENTION,
            "math": SDPBackend.MATH}[which]


def _sdpa_plan(p):
    """(kwargs for scaled_dot_product_attention, whether causal needs the
    lower-right bias) for a problem; the bias itself is added by _sdpa_call."""
    kw = {}
    gqa = p["hq"] != p["hkv"]
    if gqa:
        kw["enable_gqa"] = True
    lower_right = _masked(p) and p["sq"] != p["sk"]
    if _masked(p) and not lower_right:
        kw["is_causal"] = True
    return kw, lower_right


def _sdpa_reason(which, p):
    torch = _import("torch")
    if _import("torch.nn.attention") is None or not hasattr(torch.nn.attention, "sdpa_kernel"):
        return "torch %s has no torch.nn.attention.sdpa_kernel (needs torch >= 2.3)" % torch.__version__
    tv = _torch_version()
    d = p["d"]
    gqa = p["hq"] != p["hkv"]
    if gqa and tv < (2, 5):
        return "Hq != Hkv needs scaled_dot_product_attention(enable_gqa=True), torch >= 2.5 (have %s)" % torch.__version__
    if which == "math":
        # The reference backend: any D, any mask (the lower-right bias is
        # materialized), scores of Sq x Sk per head in memory.
        kw, lower_right = _sdpa_plan(p)
        if lower_right:
            bias = _import("torch.nn.attention.bias")
            if bias is None or not hasattr(bias, "causal_lower_right"):
                return "torch %s has no causal_lower_right bias; SDPA's is_causal is top-left aligned (needs Sq == Sk)" % torch.__version__
        if p["b"] * p["hq"] * p["sq"] * p["sk"] > (1 << 31):
            return "SDPA math holds every score in memory: B*H*Sq*Sk over 2^31"
        return None
    if d % 8 != 0:
        return "D=%d is not a multiple of 8 (SDPA %s would pad or refuse)" % (d, which)
    if which == "flash" and d > 256:
        return "SDPA flash supports D <= 256"
    kw, lower_right = _sdpa_plan(p)
    if lower_right:
        bias = _import("torch.nn.attention.bias")
        if bias is None or not hasattr(bias, "causal_lower_right"):
            return "torch %s has no causal_lower_right bias; SDPA's is_causal is top-left aligned (needs Sq == Sk)" % torch.__version__
        import inspect

        try:
            src = inspect.getsource(bias.CausalBias._dispatch)
            params = inspect.signature(bias.CausalBias._dispatch).parameters
        except Exception:
            return "cannot inspect torch's CausalBias dispatch; bottom-right causal with Sq != Sk unverified"
        if gqa and "enable_gqa" not in params:
            return "torch %s: causal_lower_right does not take enable_gqa" % torch.__version__
        if which == "flash" and "_scaled_dot_product_flash_attention" not in src:
            return ("torch %s routes causal_lower_right to efficient attention only; "
                    "SDPA flash's is_causal is top-left aligned (needs Sq == Sk)" % torch.__version__)
        if which == "efficient" and "_efficient_attention_forward" not in src:
            return "torch %s: causal_lower_right has no efficient-attention path" % torch.__version__
    return _sdpa_predicate(which, p, lower_right)


def _sdpa_predicate(which, p, lower_right):
    """torch's own can_use_{flash,efficient}_attention for the problem, or None
    when this torch does not expose it (then the call itself decides)."""
    import torch

    cuda_backends = torch.backends.cuda
    can_use = getattr(cuda_backends, "can_use_flash_attention" if which == "flash"
                      else "can_use_efficient_attention", None)
    params_cls = getattr(cuda_backends, "SDPAParams", None)
    if can_use is None or params_cls is None:
        return None
    dt = torch.bfloat16 if p["dtype"] == "bf16" else torch.float16
    # Shapes only: one element per tensor, expanded (no memory, no kernel).
    one = torch.empty((1, 1, 1, p["d"]), device="cuda", dtype=dt)
    q = one.expand(p["b"], p["hq"], p["sq"], p["d"])
    k = one.expand(p["b"], p["hkv"], p["sk"], p["d"])
    # The bias path asks with is_causal=False (it then picks the kernel itself).
    is_causal = _masked(p) and not lower_right
    gqa = p["hq"] != p["hkv"]
    try:
        params = params_cls(q, k, k, None, 0.0, is_causal, gqa)
    except TypeError:  # torch < 2.5: no enable_gqa field
        params = params_cls(q, k, k, None, 0.0, is_causal)
    from torch.nn.attention import sdpa_kernel

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with sdpa_kernel([_sdpa_backend(which)]):
            ok = can_use(params, True)
    if ok:
        return None
    why = "; ".join(str(w.message).strip() for w in caught if str(w.message).strip())
    return "torch %s SDPA %s refuses this problem%s" % (
        torch.__version__, which, (": " + why) if why else "")


def _sdpa_call(which, q, k, v, causal):
    key = (which,) + _key(q, k, causal)
    entry = _SDPA_CACHE.get(key)
    if entry is None:
        import torch
        from torch.nn.attention import sdpa_kernel

        p = problem_of(q, k, causal)
        kw, lower_right = _sdpa_plan(p)
        if lower_right:
            from torch.nn.attention.bias import causal_lower_right

            kw["attn_mask"] = causal_lower_right(p["sq"], p["sk"])
        entry = (sdpa_kernel, [_sdpa_backend(which)], kw, torch.nn.functional.scaled_dot_product_attention)
        _SDPA_CACHE[key] = entry
    ctx, backends, kw, sdpa = entry
    with ctx(backends):
        return sdpa(q, k, v, **kw)


def sdpa_flash(q, k, v, causal=False):
    """torch SDPA restricted to its FlashAttention-2 backend."""
    return _sdpa_call("flash", q, k, v, causal)


def sdpa_efficient(q, k, v, causal=False):
    """torch SDPA restricted to its memory-efficient (CUTLASS) backend."""
    return _sdpa_call("efficient", q, k, v, causal)


def sdpa_math(q, k, v, causal=False):
    """torch SDPA restricted to its math backend (PyTorch's reference: the
    scores materialized, softmax and P·V as separate operations)."""
    return _sdpa_call("math", q, k, v, causal)


@_supports(sdpa_math)
def _sdpa_math_supports(p):
    return _sdpa_reason("math", p)


@_supports(sdpa_flash)
def _sdpa_flash_supports(p):
    return _sdpa_reason("flash", p)


@_supports(sdpa_efficient)
def _sdpa_efficient_supports(p):
    return _sdpa_reason("efficient", p)


def _sdpa_status(which):
    import torch

    if _import("torch.nn.attention") is None or not hasattr(torch.nn.attention, "sdpa_kernel"):
        return False, "torch %s has no torch.nn.attention.sdpa_kernel (needs >= 2.3)" % torch.__version__
    avail = getattr(torch.backends.cuda, "is_flash_attention_available", None)
    if which == "flash" and avail is not None and not avail():
        return False, "torch %s was built without flash attention" % torch.__version__
    return True, "torch %s" % torch.__version__


# ---------------------------------------------------------------------------
# FlexAttention (compiled)
# ---------------------------------------------------------------------------
#
# flex_attention under torch.compile (one compiled function for the process;
# dynamo specializes it per shape and per mask_mod, hence the raised cache
# limit). The end-aligned causal block mask is built once per problem on the
# problem's device. Non-multiple-of-128 lengths need torch >= 2.5; torch
# before 2.7 refused GQA groups that are not a power of 2 (pytorch issue
# 143117) and head dims that are not a power of 2.

_FLEX = {}


def _flex_compiled():
    fn = _FLEX.get("fn")
    if fn is None:
        import torch
        from torch.nn.attention.flex_attention import flex_attention

        cfg = torch._dynamo.config
        for name in ("cache_size_limit", "recompile_limit"):
            if hasattr(cfg, name) and getattr(cfg, name) < 64:
                setattr(cfg, name, 64)
        if hasattr(cfg, "accumulated_cache_size_limit") and cfg.accumulated_cache_size_limit < 512:
            cfg.accumulated_cache_size_limit = 512
        fn = torch.compile(flex_attention, dynamic=False)
        _FLEX["fn"] = fn
    return fn


def _end_aligned_causal(offset):
    """mask_mod: query i sees key j when j <= i + (Sk - Sq)."""
    def end_aligned_causal(b, h, q_idx, kv_idx):
        return q_idx + offset >= kv_idx
    return end_aligned_causal


def _flex_q_block(sq, g):
    """The causal block mask's query block for Sq queries of G = Hq/Hkv heads.
    Under 128 queries inductor may pick flex decoding, which packs the group
    into one M tile (BLOCK_M = next_pow2(Sq * G), at least 16) and keeps only
    tiles that divide the mask's query block: with the default 128 none does
    once Sq * G > 128 (100 x 4, 77 x 4), and inductor raises
    NoValidChoicesError (torch 2.11's flex_decoding.py; pytorch PR 185349).
    Those are the two selftest shapes taken to be run146's 14 py:flex
    failures (the log kept only the count). A block that large still holds
    every query, and the main kernel's 64 or 128 rows divide it."""
    block = 128
    if sq < 128:
        while block < sq * g:
            block *= 2
    return block


def flex(q, k, v, causal=False):
    """torch FlexAttention, compiled; end-aligned causal through a block mask."""
    key = _key(q, k, causal)
    entry = _FLEX.get(key)
    if entry is None:
        from torch.nn.attention.flex_attention import create_block_mask

        sq, sk = int(q.shape[2]), int(k.shape[2])
        kw = {}
        if q.shape[1] != k.shape[1]:
            kw["enable_gqa"] = True
        if causal and sq > 1:
            q_block = _flex_q_block(sq, int(q.shape[1]) // int(k.shape[1]))
            kw["block_mask"] = create_block_mask(
                _end_aligned_causal(sk - sq), None, None, sq, sk, device=q.device,
                BLOCK_SIZE=(q_block, 128))
        else:
            # Without a block mask flex_attention builds a one-block "empty"
            # mask from torch.ones/zeros on every call, which inside the
            # compiled graph are fill kernels of their own; build it once.
            import torch.nn.attention.flex_attention as fa

            empty = getattr(fa, "_create_empty_block_mask", None)
            try:
                if empty is not None:
                    kw["block_mask"] = empty(q, k)
            except TypeError:  # another private signature: let flex build it
                pass
        entry = (_flex_compiled(), kw)
        _FLEX[key] = entry
    fn, kw = entry
    return fn(q, k, v, **kw)


@_supports(flex)
def _flex_supports(p):
    ok, detail = _flex_status()
    if not ok:
        return detail
    tv = _torch_version()
    g = p["hq"] // p["hkv"]
    if tv < (2, 7):
        if g > 1 and not _is_pow2(g):
            return "torch %s FlexAttention needs a power-of-2 GQA group (Hq/Hkv=%d); fixed in newer torch" % (
                ".".join(map(str, tv)), g)
        if not (_is_pow2(p["d"]) and p["d"] >= 16):
            return "torch %s FlexAttention needs a power-of-2 head dim >= 16 (D=%d)" % (
                ".".join(map(str, tv)), p["d"])
    if p["d"] > 256:
        return "FlexAttention's Triton kernel takes D <= 256"
    return None


def _flex_status():
    import torch

    if _torch_version() < (2, 5):
        return False, "torch %s: FlexAttention with GQA and any lengths needs torch >= 2.5" % torch.__version__
    if _import("torch.nn.attention.flex_attention") is None:
        return False, "torch %s has no torch.nn.attention.flex_attention" % torch.__version__
    triton = _import("triton")
    if triton is None:
        return False, "triton is not installed (torch.compile of flex_attention needs it)"
    return True, "torch %s, triton %s" % (torch.__version__, triton.__version__)


# ---------------------------------------------------------------------------
# Triton fused-attention tutorial, forward only
# ---------------------------------------------------------------------------
#
# Written for attnscope after the forward pass of Triton's fused-attention
# tutorial (triton-lang/triton python/tutorials/06-fused-attention.py, MIT
# licence, as of commit 003da478d84f5bb0f51b3988cf0ea0bbe60282b7: FlashAttention-2
# forward, Q block resident, K/V streamed, online softmax in base 2 with the
# scale folded into log2(e), the K/V loop split into an unmasked off-band
# stage and a masked on-band stage). This is the plain-pointer form (no TMA
# descriptors, no block pointers, no Blackwell-only features) so it runs on
# triton 3.1-3.5 on Ampere and Hopper. Changes from the tutorial:
#  * grouped-query heads: the KV head is query head // (Hq // Hkv), computed in
#    the offset arithmetic (no K/V copies);
#  * fp16 and bf16 (P is cast to V's dtype for the second matmul);
#  * end-aligned causal for any Sq <= Sk, and lengths that are not multiples
#    of the block sizes (masked loads, -inf for keys beyond Sk);
#  * no logsumexp output (forward only), output stored through its strides;
#  * a handful of autotune configs so first-call tuning stays short.
#
# triton.jit reads its function's source with inspect; this module may be
# installed from a string with no file behind it, so the kernel's source is
# kept here as text, registered in linecache under a pseudo file name and
# compiled from there.

_TRITON_KERNEL_SRC = r'''
import triton
import triton.language as tl


@triton.jit
def _attn_fwd_inner(acc, l_i, m_i, q, k_base, v_base, stride_kn, stride_vn,
                    offs_m, offs_d, lo, hi, SK, CAUSAL_OFFSET, qk_scale,
                    BLOCK_N: tl.constexpr, MASKED: tl.constexpr, CAUSAL: tl.constexpr):
    # Keys [lo, hi) in steps of BLOCK_N; MASKED blocks check j < Sk and, when
    # causal, j <= i + (Sk - Sq).
    offs_n = tl.arange(0, BLOCK_N)
    for start_n in range(lo, hi, BLOCK_N):
        start_n = tl.multiple_of(start_n, BLOCK_N)
        cols = start_n + offs_n
        k_ptrs = k_base + cols[None, :] * stride_kn + offs_d[:, None]
        v_ptrs = v_base + cols[:, None] * stride_vn + offs_d[None, :]
        if MASKED:
            k = tl.load(k_ptrs, mask=cols[None, :] < SK, other=0.0)
        else:
            k = tl.load(k_ptrs)
        qk = tl.dot(q, k) * qk_scale
        if MASKED:
            keep = cols[None, :] < SK
            if CAUSAL:
                keep = keep & (offs_m[:, None] + CAUSAL_OFFSET >= cols[None, :])
            qk = tl.where(keep, qk, float("-inf"))
        m_ij = tl.maximum(m_i, tl.max(qk, 1))
        p = tl.math.exp2(qk - m_ij[:, None])
        alpha = tl.math.exp2(m_i - m_ij)
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None]
        if MASKED:
            v = tl.load(v_ptrs, mask=cols[:, None] < SK, other=0.0)
        else:
            v = tl.load(v_ptrs)
        acc = tl.dot(p.to(v.dtype), v, acc)
        m_i = m_ij
    return acc, l_i, m_i


@triton.jit
def _attn_fwd(Q, K, V, Out, qk_scale,
              stride_qz, stride_qh, stride_qm,
              stride_kz, stride_kh, stride_kn,
              stride_vz, stride_vh, stride_vn,
              stride_oz, stride_oh, stride_om,
              HQ, GROUP, SQ, SK, CAUSAL_OFFSET,
              HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
              CAUSAL: tl.constexpr):
    start_m = tl.program_id(0)
    off_hz = tl.program_id(1)
    off_z = off_hz // HQ
    off_h = off_hz % HQ
    off_kvh = off_h // GROUP  # grouped-query: KV head of this query head
    q_base = Q + off_z.to(tl.int64) * stride_qz + off_h.to(tl.int64) * stride_qh
    k_base = K + off_z.to(tl.int64) * stride_kz + off_kvh.to(tl.int64) * stride_kh
    v_base = V + off_z.to(tl.int64) * stride_vz + off_kvh.to(tl.int64) * stride_vh
    o_base = Out + off_z.to(tl.int64) * stride_oz + off_h.to(tl.int64) * stride_oh

    m0 = start_m * BLOCK_M
    offs_m = m0 + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, HEAD_DIM)
    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    # Q block stays in registers/shared memory throughout.
    q = tl.load(q_base + offs_m[:, None] * stride_qm + offs_d[None, :],
                mask=offs_m[:, None] < SQ, other=0.0)

    # Off-band: key blocks that every row of this query block sees whole.
    full_end = (SK // BLOCK_N) * BLOCK_N
    hi = SK
    if CAUSAL:
        full_end = tl.minimum(full_end, ((m0 + CAUSAL_OFFSET + 1) // BLOCK_N) * BLOCK_N)
        hi = tl.minimum(hi, m0 + BLOCK_M + CAUSAL_OFFSET)
    acc, l_i, m_i = _attn_fwd_inner(acc, l_i, m_i, q, k_base, v_base, stride_kn, stride_vn,
                                    offs_m, offs_d, 0, full_end, SK, CAUSAL_OFFSET, qk_scale,
                                    BLOCK_N, False, CAUSAL)
    # On-band: the diagonal (causal) and the ragged tail beyond the last full block.
    acc, l_i, m_i = _attn_fwd_inner(acc, l_i, m_i, q, k_base, v_base, stride_kn, stride_vn,
                                    offs_m, offs_d, full_end, hi, SK, CAUSAL_OFFSET, qk_scale,
                                    BLOCK_N, True, CAUSAL)
    acc = acc / l_i[:, None]
    tl.store(o_base + offs_m[:, None] * stride_om + offs_d[None, :],
             acc.to(Out.dtype.element_ty), mask=offs_m[:, None] < SQ)
'''

_TRITON_KERNEL_FILE = "<attnscope_adapters:triton_tutorial_kernel>"

# (BLOCK_M, BLOCK_N, num_stages, num_warps): a handful in the tutorial's
# ranges (its keep() drops 8 warps below 128x128 tiles).
_TRITON_CONFIGS = [
    (128, 64, 3, 4),
    (128, 32, 4, 4),
    (64, 64, 4, 4),
    (128, 128, 3, 8),
    (32, 64, 3, 4),  # short query blocks (decode-like problems)
]

_TRITON = {}


def _triton_choices_path():
    """attnscope's cache folder (src/cache_dir.rs): $XDG_CACHE_HOME/attnscope, else ~/.cache/attnscope."""
    import os

    base = os.environ.get("XDG_CACHE_HOME") or (
        os.path.join(os.environ["HOME"], ".cache") if os.environ.get("HOME") else None)
    return os.path.join(base, "attnscope", "triton_tutorial.json") if base else None


def _triton_choices():
    import json

    path = _triton_choices_path()
    try:
        with open(path) as f:
            data = json.load(f)
        return data if isinstance(data, dict) else {}
    except (OSError, TypeError, ValueError):
        return {}


def _triton_remember(key, config):
    """Keeps the autotuner's pick for this GPU and problem, so every later process (a rerun, Nsight
    Compute's replay of the same call) launches the same tile instead of tuning again under other
    conditions: run142 measured one process's pick 33% off another's at B2 H8 S512 D64."""
    import json
    import os

    path = _triton_choices_path()
    if path is None:
        return
    data = _triton_choices()
    data[key] = config
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        tmp = "%s.%d" % (path, os.getpid())
        with open(tmp, "w") as f:
            json.dump(data, f, indent=1, sort_keys=True)
        os.replace(tmp, path)
    except OSError:
        pass  # no cache: the next process tunes again


def _triton_choice_key(q, k, causal):
    import torch

    b, hq, sq, d = (int(x) for x in q.shape)
    hkv, sk = int(k.shape[1]), int(k.shape[2])
    return "%s|%s|sq%d|sk%d|d%d|g%d|%s" % (
        torch.cuda.get_device_name(q.device), str(q.dtype).replace("torch.", ""), sq, sk, d,
        hq // hkv, "causal" if causal and sq > 1 else "plain")


def _triton_kernel():
    kern = _TRITON.get("kernel")
    if kern is None:
        import triton

        lines = _TRITON_KERNEL_SRC.splitlines(True)
        # mtime None: linecache.checkcache keeps the entry (no file behind it).
        linecache.cache[_TRITON_KERNEL_FILE] = (len(_TRITON_KERNEL_SRC), None, lines, _TRITON_KERNEL_FILE)
        namespace = {"__name__": "attnscope_adapters_triton_kernel"}
        exec(compile(_TRITON_KERNEL_SRC, _TRITON_KERNEL_FILE, "exec"), namespace)
        configs = [triton.Config({"BLOCK_M": bm, "BLOCK_N": bn}, num_stages=s, num_warps=w)
                   for bm, bn, s, w in _TRITON_CONFIGS]
        kern = triton.autotune(configs=configs, key=["SQ", "SK", "HEAD_DIM", "CAUSAL", "GROUP"])(
            namespace["_attn_fwd"])
        _TRITON["kernel"] = kern
    return kern


def triton_tutorial(q, k, v, causal=False):
    """Triton fused-attention tutorial forward (plain pointers), GQA, end-aligned causal."""
    import torch

    key = _key(q, k, causal)
    entry = _TRITON.get(key)
    if entry is None:
        import triton

        b, hq, sq, d = (int(x) for x in q.shape)
        hkv, sk = int(k.shape[1]), int(k.shape[2])

        def grid(meta, _sq=sq, _bh=b * hq):
            return (triton.cdiv(_sq, meta["BLOCK_M"]), _bh)

        scalars = (1.0 / math.sqrt(d) * 1.4426950408889634, hq, hq // hkv, sq, sk, sk - sq)
        consts = dict(HEAD_DIM=d, CAUSAL=bool(causal and sq > 1))
        choice_key = _triton_choice_key(q, k, causal)
        chosen = _triton_choices().get(choice_key)
        kern = _triton_kernel()
        if isinstance(chosen, list) and len(chosen) == 4:
            # An earlier process's pick: the kernel itself, at that tile, no tuning.
            bm, bn, stages, warps = (int(x) for x in chosen)
            kern = kern.fn
            consts.update(BLOCK_M=bm, BLOCK_N=bn, num_stages=stages, num_warps=warps)
            choice_key = None
        entry = (kern, grid, scalars, consts, choice_key)
        _TRITON[key] = entry
    kern, grid, (scale, hq, group, sq, sk, off), consts, choice_key = entry
    if q.stride(-1) != 1 or k.stride(-1) != 1 or v.stride(-1) != 1:
        raise ValueError("triton_tutorial reads rows of D contiguous elements (stride(-1) == 1)")
    o = torch.empty_like(q)  # caching allocator: no kernel
    kern[grid](q, k, v, o, scale,
               q.stride(0), q.stride(1), q.stride(2),
               k.stride(0), k.stride(1), k.stride(2),
               v.stride(0), v.stride(1), v.stride(2),
               o.stride(0), o.stride(1), o.stride(2),
               hq, group, sq, sk, off, **consts)
    if choice_key is not None and getattr(kern, "best_config", None) is not None:
        c = kern.best_config
        _triton_remember(choice_key, [c.kwargs["BLOCK_M"], c.kwargs["BLOCK_N"], c.num_stages, c.num_warps])
        _TRITON[key] = entry[:4] + (None,)
    return o


@_supports(triton_tutorial)
def _triton_supports(p):
    ok, detail = _triton_status()
    if not ok:
        return detail
    if p["d"] not in (64, 128):
        return "the tutorial kernel is built for D in {64, 128} (D=%d)" % p["d"]
    if _capability() < (8, 0):
        return "the tutorial kernel needs sm80 or newer (bf16, tl.dot on tensor cores)"
    return None


def _triton_status():
    triton = _import("triton")
    if triton is None:
        return False, "triton is not installed"
    tv = _version_tuple(triton.__version__)
    if tv < (3, 0):
        return False, "triton %s is older than 3.0" % triton.__version__
    return True, "triton %s" % triton.__version__


# ---------------------------------------------------------------------------
# FlashAttention 3 (flash_attn_interface) and FlashAttention 2 (flash_attn)
# ---------------------------------------------------------------------------
#
# Both take [B, S, H, D] with the last dim contiguous: q.transpose(1, 2) is a
# view with stride(-1) == 1, which their maybe_contiguous() leaves alone
# (Dao-AILab/flash-attention hopper/flash_attn_interface.py and
# flash_attn/flash_attn_interface.py). Their docstrings: GQA native (Hq a
# multiple of Hkv, head h uses KV head h // (Hq/Hkv)); "If causal=True, the
# causal mask is aligned to the bottom right corner of the attention matrix"
# (FA2 since 2.1). Some versions return (out, softmax_lse); newer FA3 returns
# out unless return_attn_probs=True.
#
# FA3's flash_attn_func defaults to num_splits=1 (no split-KV); where it takes
# num_splits we pass 0 so its own heuristic splits the KV of decode problems.
# With causal (and no split) FA3 zeroes a tile semaphore each call: a memset
# of the library's own, counted with its kernels.
# FA2 with Sq == 1 and GQA swaps the head groups into the sequence dim and
# copies its output back (one extra kernel of the library's own).

_FA = {}


def _fa_func(which):
    """(flash_attn_func, extra kwargs), looked up once."""
    entry = _FA.get(which)
    if entry is None:
        extra = {}
        if which == "fa3":
            fn = importlib.import_module("flash_attn_interface").flash_attn_func
            import inspect

            try:
                params = inspect.signature(fn).parameters
            except (TypeError, ValueError):
                params = {}
            if "num_splits" in params:
                # flash_attn_func defaults to num_splits=1; 0 lets mha_fwd pick
                # (hopper/flash_api.cpp: num_splits <= 0 ? get_num_splits(params)),
                # as flash_attn_with_kvcache does by default: decode gets a KV split.
                extra["num_splits"] = 0
        else:
            fn = importlib.import_module("flash_attn").flash_attn_func
        entry = (fn, extra)
        _FA[which] = entry
    return entry


def _fa_call(which, q, k, v, causal):
    d = q.shape[-1]
    fn, extra = _fa_func(which)
    out = fn(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2),
             softmax_scale=1.0 / math.sqrt(d), causal=bool(causal and q.shape[2] > 1), **extra)
    if isinstance(out, (tuple, list)):
        out = out[0]
    return out.transpose(1, 2)


def fa3(q, k, v, causal=False):
    """FlashAttention 3 (flash_attn_interface.flash_attn_func)."""
    return _fa_call("fa3", q, k, v, causal)


def fa2(q, k, v, causal=False):
    """FlashAttention 2 (flash_attn.flash_attn_func)."""
    return _fa_call("fa2", q, k, v, causal)


def _fa3_status():
    why = _unloadable("flash_attn_interface", "flash_attn_interface (FlashAttention 3)")
    if why is not None:
        return False, why
    mod = sys.modules["flash_attn_interface"]
    if not hasattr(mod, "flash_attn_func"):
        return False, "flash_attn_interface has no flash_attn_func"
    ver = None
    for dist in ("flash_attn_3", "flash-attn-3", "flashattn-hopper", "flash_attn_interface"):
        try:
            from importlib import metadata

            ver = metadata.version(dist)
            break
        except Exception:
            continue
    return True, "flash_attn_interface %s" % (ver or "(version unknown)")


def _fa2_status():
    why = _unloadable("flash_attn", "flash_attn (FlashAttention 2)")
    if why is not None:
        return False, why
    mod = sys.modules["flash_attn"]
    ver = getattr(mod, "__version__", "0")
    if _version_tuple(ver) < (2, 1):
        return False, "flash_attn %s: causal is bottom-right aligned only from 2.1" % ver
    if not hasattr(mod, "flash_attn_func"):
        return False, "flash_attn %s has no flash_attn_func" % ver
    return True, "flash_attn %s" % ver


def _fa_shape_reason(name, p):
    d = p["d"]
    if d % 8 != 0 or d > 256:
        return "%s takes D a multiple of 8 up to 256 (D=%d)" % (name, d)
    if _capability() < (8, 0):
        return "%s needs sm80 or newer" % name
    return None


@_supports(fa3)
def _fa3_supports(p):
    ok, detail = _fa3_status()
    if not ok:
        return detail
    # hopper/flash_api.cpp mha_fwd: sm80 or newer, D a multiple of 8 up to
    # the build's max (256 unless hdim256 is disabled); a GPU or D the build
    # lacks raises rather than computing wrong.
    return _fa_shape_reason("FlashAttention 3", p)


@_supports(fa2)
def _fa2_supports(p):
    ok, detail = _fa2_status()
    if not ok:
        return detail
    return _fa_shape_reason("FlashAttention 2", p)


# ---------------------------------------------------------------------------
# FlashInfer
# ---------------------------------------------------------------------------
#
# Facts (flashinfer-python 0.7.4 wheel, flashinfer/prefill.py, decode.py and
# data/csrc):
#  * single_prefill_with_kv_cache(q [qo_len, Hq, D], k, v [Hkv, kv_len, D] with
#    kv_layout="HND"); the kernels read q through q.stride(0), q.stride(1)
#    (single_prefill.cu, single_prefill_sm90.cu), so q[0].transpose(0, 1) is
#    used as a view; the output is allocated [qo_len, Hq, D].
#  * causal is bottom-right: include/flashinfer/attention/prefill.cuh masks
#    kv_idx + qo_len > kv_len + q_idx.
#  * single_decode_with_kv_cache(q [Hq, D]) requires a contiguous q: with
#    Sq == 1, q[0, :, 0, :] is.
#  * B > 1 decode: BatchDecodeWithPagedKVCacheWrapper over the K/V tensors
#    viewed as a paged cache in HND layout, one page of Sk tokens per
#    sequence ([B, Hkv, Sk, D] is exactly [num_pages, Hkv, page_size, D]),
#    planned once per problem. B > 1 with Sq > 1 would need q as
#    [B*Sq, Hq, D], which [B, Hq, Sq, D] is not without a copy: refused.
# Versions before 0.2 read q as contiguous and had another wrapper API:
# refused.

_FI = {}
_FI_WORKSPACE_BYTES = 128 * 1024 * 1024
_FI_MAX_PLANS = 8


def _fi_decode_wrapper(q, k):
    """A BatchDecodeWithPagedKVCacheWrapper planned for this problem."""
    import flashinfer
    import torch

    key = ("batch_decode",) + _key(q, k, False)
    w = _FI.get(key)
    if w is None:
        b, hq, _, d = (int(x) for x in q.shape)
        hkv, sk = int(k.shape[1]), int(k.shape[2])
        plans = [x for x in _FI if x[0] == "batch_decode"]
        if len(plans) >= _FI_MAX_PLANS:  # each plan holds its own workspace
            del _FI[plans[0]]
        ws = torch.empty(_FI_WORKSPACE_BYTES, dtype=torch.uint8, device=q.device)
        w = flashinfer.BatchDecodeWithPagedKVCacheWrapper(ws, kv_layout="HND")
        indptr = torch.arange(b + 1, dtype=torch.int32)          # page i is sequence i
        indices = torch.arange(b, dtype=torch.int32)
        last_page_len = torch.full((b,), sk, dtype=torch.int32)  # the one page is full
        w.plan(indptr, indices, last_page_len, hq, hkv, d, sk,
               q_data_type=q.dtype, kv_data_type=k.dtype)
        _FI[key] = w
    return w


def flashinfer(q, k, v, causal=False):
    """FlashInfer single prefill / single decode (B == 1), batch decode (B > 1, Sq == 1)."""
    import flashinfer as fi

    b, hq, sq, d = q.shape
    if b == 1 and sq == 1:
        o = fi.single_decode_with_kv_cache(q[0, :, 0, :], k[0], v[0], kv_layout="HND",
                                           sm_scale=1.0 / math.sqrt(d))
        return o.view(1, hq, 1, d)
    if b == 1:
        o = fi.single_prefill_with_kv_cache(q[0].transpose(0, 1), k[0], v[0],
                                            causal=bool(causal), kv_layout="HND",
                                            sm_scale=1.0 / math.sqrt(d))
        if not o.is_contiguous():
            # flashinfer 0.7.4 allocates out contiguous [Sq, Hq, D] and its
            # kernels write it so; an older one that returns empty_like(q)
            # (strided like our q view) may have written it contiguous anyway.
            raise RuntimeError("flashinfer %s returned a strided output for a strided q; "
                               "not trusted (0.7.4 allocates it contiguous)" % fi.__version__)
        return o.transpose(0, 1).unsqueeze(0)
    w = _fi_decode_wrapper(q, k)
    o = w.run(q[:, :, 0, :], (k, v))
    return o.unsqueeze(2)


@_supports(flashinfer)
def _flashinfer_supports(p):
    ok, detail = _flashinfer_status()
    if not ok:
        return detail
    if p["b"] > 1 and p["sq"] > 1:
        return ("FlashInfer batch prefill needs q as [B*Sq, Hq, D], which [B, Hq, Sq, D] "
                "is not without a copy; B == 1 or Sq == 1 only")
    if p["d"] not in (64, 128, 256):
        return "FlashInfer's prebuilt head dims are 64, 128, 256 (D=%d)" % p["d"]
    if _capability() < (8, 0):
        return "FlashInfer's fp16/bf16 kernels are used on sm80 or newer here"
    return None


def _flashinfer_status():
    why = _unloadable("flashinfer", "flashinfer")
    if why is not None:
        return False, why
    mod = sys.modules["flashinfer"]
    ver = getattr(mod, "__version__", "0")
    if _version_tuple(ver) < (0, 2):
        return False, "flashinfer %s is older than 0.2 (strided q, plan/run API)" % ver
    return True, "flashinfer %s" % ver


# ---------------------------------------------------------------------------
# Registry and doctor
# ---------------------------------------------------------------------------

ADAPTERS = {
    "sdpa_flash": sdpa_flash,
    "sdpa_efficient": sdpa_efficient,
    "sdpa_math": sdpa_math,
    "flex": flex,
    "triton_tutorial": triton_tutorial,
    "fa3": fa3,
    "fa2": fa2,
    "flashinfer": flashinfer,
}

_STATUS = {
    "sdpa_flash": lambda: _sdpa_status("flash"),
    "sdpa_efficient": lambda: _sdpa_status("efficient"),
    "sdpa_math": lambda: _sdpa_status("math"),
    "flex": _flex_status,
    "triton_tutorial": _triton_status,
    "fa3": _fa3_status,
    "fa2": _fa2_status,
    "flashinfer": _flashinfer_status,
}


def doctor():
    """[(name, usable, detail)] for every adapter: the library version when
    usable, else the reason (torch missing, no CUDA device, library missing or
    too old). Shape limits are attnscope_supports' business."""
    rows = []
    base = _torch_reason()
    for name in ADAPTERS:
        if base is not None:
            rows.append((name, False, base))
            continue
        try:
            ok, detail = _STATUS[name]()
        except Exception as e:  # noqa: BLE001
            ok, detail = False, "status check failed: %s: %s" % (type(e).__name__, e)
        rows.append((name, bool(ok), detail))
    return rows


if __name__ == "__main__":
    for name, ok, detail in doctor():
        print("%-16s %-8s %s" % (name, "usable" if ok else "no", detail))
