#!/usr/bin/env python3
"""Check attnscope's bundled Python adapters on a GPU, outside attnscope.

For every adapter in attnscope_adapters.ADAPTERS and a few problems, compute
the adapter's output, compare it with a float64 reference (end-aligned causal,
grouped-query heads, scale 1/sqrt(D)) and time it with CUDA events (median of
20 after warm-up, for information). One line per (adapter, problem):
PASS / FAIL with the max abs error, or "not run: reason". Exit status 1 if
any FAIL, 2 if torch or CUDA is missing.

    python3 python/check_adapters.py [--only NAME[,NAME]] [--iters N]
"""

import argparse
import math
import os
import statistics
import sys
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import attnscope_adapters as ad  # noqa: E402

# (label, b, hq, hkv, sq, sk, d, dtype, causal)
PROBLEMS = [
    ("B2 H8 S512 D64 fp16", 2, 8, 8, 512, 512, 64, "fp16", False),
    ("B2 H8 S512 D64 fp16 causal", 2, 8, 8, 512, 512, 64, "fp16", True),
    ("B1 H32/8 S1024 D128 bf16 causal", 1, 32, 8, 1024, 1024, 128, "bf16", True),
    ("B2 H8/2 S1/4096 D128 bf16 causal", 2, 8, 2, 1, 4096, 128, "bf16", True),
    ("B1 H8 S333/777 D64 fp16 causal", 1, 8, 8, 333, 777, 64, "fp16", True),
    ("B1 H16/4 S256/1024 D128 bf16 causal", 1, 16, 4, 256, 1024, 128, "bf16", True),
]

# Max abs error allowed against the f64 reference (inputs ~ N(0, 1)).
TOL = {"fp16": 4e-3, "bf16": 3e-2}


def reference(q, k, v, causal):
    """float64 attention: GQA mapping h -> h // (Hq/Hkv), end-aligned causal."""
    import torch

    b, hq, sq, d = q.shape
    hkv, sk = k.shape[1], k.shape[2]
    g = hq // hkv
    qd = q.double().view(b, hkv, g, sq, d)
    kd = k.double().unsqueeze(2)
    vd = v.double().unsqueeze(2)
    s = torch.matmul(qd, kd.transpose(-1, -2)) / math.sqrt(d)  # [b, hkv, g, sq, sk]
    if causal:
        i = torch.arange(sq, device=q.device).view(sq, 1)
        j = torch.arange(sk, device=q.device).view(1, sk)
        s = s.masked_fill(j > i + (sk - sq), float("-inf"))
    p = torch.softmax(s, dim=-1)
    return torch.matmul(p, vd).view(b, hq, sq, d)


def call(fn, q, k, v, causal):
    return fn(q, k, v, causal=True) if causal else fn(q, k, v)


def time_ms(fn, q, k, v, causal, iters, stream):
    import torch

    with torch.cuda.stream(stream):
        for _ in range(3):
            call(fn, q, k, v, causal)
        starts = [torch.cuda.Event(enable_timing=True) for _ in range(iters)]
        ends = [torch.cuda.Event(enable_timing=True) for _ in range(iters)]
        for s, e in zip(starts, ends):
            s.record()
            call(fn, q, k, v, causal)
            e.record()
    stream.synchronize()
    return statistics.median(s.elapsed_time(e) for s, e in zip(starts, ends))


def kernels(fn, q, k, v, causal, stream):
    """Names of the GPU kernels (and memsets/copies) one warm call launches."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    with torch.cuda.stream(stream):
        call(fn, q, k, v, causal)
    stream.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        with torch.cuda.stream(stream):
            call(fn, q, k, v, causal)
        stream.synchronize()
    names = []
    for ev in prof.events():
        dev = getattr(ev, "device_type", None)
        if dev is not None and "CUDA" in str(dev) and ev.name and not ev.name.startswith("cuda"):
            names.append(ev.name)
    return names


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    ap.add_argument("--only", help="comma-separated adapter names")
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--no-kernels", action="store_true",
                    help="skip listing the kernels of one warm call (torch.profiler)")
    args = ap.parse_args()

    print("attnscope_adapters doctor:")
    for name, ok, detail in ad.doctor():
        print("  %-16s %-7s %s" % (name, "usable" if ok else "no", detail))
    try:
        import torch
    except ImportError:
        print("torch is not installed: nothing to check")
        return 2
    if not torch.cuda.is_available():
        print("torch %s sees no CUDA device: nothing to check" % torch.__version__)
        return 2
    print("device: %s (sm%d%d), torch %s" % ((torch.cuda.get_device_name(),)
                                            + torch.cuda.get_device_capability()
                                            + (torch.__version__,)))

    names = list(ad.ADAPTERS)
    if args.only:
        names = [n for n in args.only.split(",") if n]
        unknown = [n for n in names if n not in ad.ADAPTERS]
        if unknown:
            print("unknown adapter(s): %s (have %s)" % (", ".join(unknown), ", ".join(ad.ADAPTERS)))
            return 2
    usable = {name: ok for name, ok, _ in ad.doctor()}

    # attnscope calls adapters on a stream of its own: do the same.
    stream = torch.cuda.Stream()
    fails = 0
    t_all = time.time()
    print("%-16s %-38s %-6s %s" % ("adapter", "problem", "result", "detail"))
    for label, b, hq, hkv, sq, sk, d, dt, causal in PROBLEMS:
        dtype = torch.bfloat16 if dt == "bf16" else torch.float16
        gen = torch.Generator(device="cuda").manual_seed(1234)
        q = torch.randn(b, hq, sq, d, device="cuda", dtype=dtype, generator=gen)
        k = torch.randn(b, hkv, sk, d, device="cuda", dtype=dtype, generator=gen)
        v = torch.randn(b, hkv, sk, d, device="cuda", dtype=dtype, generator=gen)
        ref = reference(q, k, v, causal)
        problem = dict(b=b, hq=hq, hkv=hkv, sq=sq, sk=sk, d=d, dtype=dt, causal=causal)
        for name in names:
            fn = ad.ADAPTERS[name]
            reason = fn.attnscope_supports(problem)
            if reason is None and not usable.get(name, False):
                reason = "doctor says unusable"
            if reason is not None:
                print("%-16s %-38s %-6s %s" % (name, label, "-", "not run: " + reason))
                continue
            t0 = time.time()
            try:
                torch.cuda.current_stream().synchronize()
                with torch.cuda.stream(stream):
                    o = call(fn, q, k, v, causal)
                stream.synchronize()
                first_s = time.time() - t0
                if tuple(o.shape) != (b, hq, sq, d) or o.dtype != dtype:
                    raise RuntimeError("returned %s %s, want %s %s" % (
                        tuple(o.shape), o.dtype, (b, hq, sq, d), dtype))
                err = (o.double() - ref).abs().max().item()
                ok = err <= TOL[dt] and math.isfinite(err)
                ms = time_ms(fn, q, k, v, causal, args.iters, stream)
                fails += 0 if ok else 1
                print("%-16s %-38s %-6s max|err| %.2e (tol %.0e), %.4f ms median, first call %.1f s" % (
                    name, label, "PASS" if ok else "FAIL", err, TOL[dt], ms, first_s))
                if not args.no_kernels:
                    try:
                        ks = kernels(fn, q, k, v, causal, stream)
                        print("%-16s %-38s %-6s %d kernel(s): %s" % (
                            "", "", "", len(ks), "; ".join(n[:70] for n in ks)))
                    except Exception as e:  # noqa: BLE001 - informational only
                        print("%-16s %-38s %-6s kernel list unavailable: %s" % ("", "", "", e))
            except Exception as e:  # noqa: BLE001
                fails += 1
                print("%-16s %-38s %-6s %s: %s" % (name, label, "FAIL", type(e).__name__,
                                                     str(e).strip().splitlines()[0] if str(e).strip() else ""))
                if os.environ.get("ATTNSCOPE_CHECK_TRACEBACK"):
                    traceback.print_exc()
        del q, k, v, ref
    print("%d FAIL; %.0f s in all" % (fails, time.time() - t_all))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
