#!/usr/bin/env python3
"""attnscope's kernels against PyTorch SDPA, side by side in one run.

GPU time per call is measured the same way on both sides: CUPTI kernel
records (attnscope bench's default timer; torch.profiler's CUDA activity for
SDPA, every kernel of a call summed), median over back-to-back calls, fp16,
same GPU, same process order. A CUDA-event loop time per call is printed for
SDPA too, for scale.

  python3 bench/sdpa_compare.py [--bin PATH] [--variants LIST] [--json OUT]
"""
import argparse, json, statistics, subprocess, sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

SHAPES = [  # (B, H, S, D, causal)
    (2, 8, 512, 64, False),
    (2, 8, 512, 64, True),
    (4, 16, 4096, 64, False),
]
BACKENDS = {
    "cudnn": SDPBackend.CUDNN_ATTENTION,
    "flash": SDPBackend.FLASH_ATTENTION,
    "efficient": SDPBackend.EFFICIENT_ATTENTION,
}


def kernel_time_us(fn, calls=200, rounds=5):
    """Median over rounds of (sum of CUDA kernel time in a round) / calls, µs."""
    from torch.profiler import ProfilerActivity, profile
    for _ in range(20):
        fn()
    torch.cuda.synchronize()
    per_call = []
    for _ in range(rounds):
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            for _ in range(calls):
                fn()
            torch.cuda.synchronize()
        total = 0.0
        for e in prof.events():
            if str(getattr(e, "device_type", "")).endswith("CUDA"):
                total += getattr(e, "self_device_time_total", None) or getattr(e, "self_cuda_time_total", 0.0)
        per_call.append(total / calls)
    return statistics.median(per_call)


def loop_time_us(fn, calls=200, rounds=7):
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    for _ in range(20):
        fn()
    out = []
    for _ in range(rounds):
        start.record()
        for _ in range(calls):
            fn()
        end.record()
        torch.cuda.synchronize()
        out.append(start.elapsed_time(end) * 1e3 / calls)
    return statistics.median(out)


def sdpa(shape):
    b, h, s, d, causal = shape
    g = torch.Generator(device="cuda").manual_seed(1)
    q, k, v = (torch.rand(b, h, s, d, device="cuda", dtype=torch.float16, generator=g) * 2 - 1 for _ in range(3))
    rows = {}
    for name, backend in BACKENDS.items():
        def call():
            with sdpa_kernel([backend]):
                return F.scaled_dot_product_attention(q, k, v, is_causal=causal)
        try:
            call()
            torch.cuda.synchronize()
        except Exception as e:  # a backend that refuses the shape or GPU
            rows[name] = {"error": str(e).splitlines()[0][:120]}
            continue
        rows[name] = {"kernel_us": kernel_time_us(call), "loop_us": loop_time_us(call)}
    return rows


def attnscope(binary, shape, variants):
    b, h, s, d, causal = shape
    cmd = [binary, "bench", "--shape", f"{b},{h},{s},{d}", "--variants", variants,
           "--max-seconds", "3", "--telemetry-hz", "0", "--json"] + (["--causal"] if causal else [])
    p = subprocess.run(cmd, capture_output=True, text=True)
    if not p.stdout.strip():
        return {"error": p.stderr.strip()[-300:]}
    d = json.loads(p.stdout)
    return {r["variant"]: r for r in d["results"]}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=".carry/attnscope")
    ap.add_argument("--variants", default="scalar,wmma+pv+async,mma+async@tuned")
    ap.add_argument("--json", help="also write the table as JSON here")
    args = ap.parse_args()
    print(f"torch {torch.__version__}, {torch.cuda.get_device_name()}, cuDNN {torch.backends.cudnn.version()}")
    table = []
    for shape in SHAPES:
        ref = sdpa(shape)
        ours = attnscope(args.bin, shape, args.variants)
        ok = {n: r for n, r in ref.items() if "kernel_us" in r}
        best = min(ok.items(), key=lambda kv: kv[1]["kernel_us"]) if ok else (None, None)
        label = "B{} H{} S{} D{}{}".format(*shape[:4], " causal" if shape[4] else "")
        for name, r in ref.items():
            print(f"{label:<24} sdpa:{name:<10} " + (f"{r['kernel_us']:9.2f} µs kernel  {r['loop_us']:9.2f} µs loop" if "kernel_us" in r else f"n/a ({r['error']})"))
        for v, r in ours.items():
            if v == "error" or "p50_us" not in r:
                print(f"{label:<24} attnscope {v}: {r if v == 'error' else r.get('error')}")
                continue
            ratio = r["p50_us"] / best[1]["kernel_us"] if best[0] else float("nan")
            print(f"{label:<24} {v:<16} {r['p50_us']:9.2f} µs kernel  = {ratio:.2f}× sdpa:{best[0]}  correct={r['correct']}")
            table.append({"shape": label, "variant": v, "p50_us": r["p50_us"], "best_sdpa": best[0],
                          "best_sdpa_us": best[1]["kernel_us"] if best[0] else None, "ratio": ratio,
                          "flash_us": ref.get("flash", {}).get("kernel_us"), "correct": r["correct"]})
    print(f"\n{'shape':<24} {'variant':<26} {'attnscope µs':>12} {'best SDPA':>16} {'ratio':>7} {'vs flash thr.':>13}")
    for t in table:
        flash = t["flash_us"] / t["p50_us"] if t["flash_us"] else float("nan")
        print(f"{t['shape']:<24} {t['variant']:<26} {t['p50_us']:12.2f} {t['best_sdpa'] or '-':>8} {t['best_sdpa_us'] or float('nan'):7.2f} "
              f"{t['ratio']:7.2f} {flash:12.2f}×")
    print("\nissue 9 targets (GPU time per call, this run):")
    for shape in sorted({t["shape"] for t in table}, key=[t["shape"] for t in table].index):
        rows = [t for t in table if t["shape"] == shape and t["correct"]]
        if not rows:
            continue
        best = min(rows, key=lambda t: t["p50_us"])
        by = {t["variant"]: t for t in rows}
        line = f"  {shape:<24} best {best['variant']} = {best['ratio']:.3f}× {best['best_sdpa']} (target ≤ 0.9)"
        if best["flash_us"]:
            line += f", {best['flash_us'] / best['p50_us']:.2f}× flash throughput (S=4096 target ≥ 0.8)"
        if "scalar" in by and "wmma+pv+async" in by:
            line += f"; wmma+pv+async {by['scalar']['p50_us'] / by['wmma+pv+async']['p50_us']:.2f}× scalar (target ≥ 3)"
        print(line)
    if args.json:
        json.dump(table, open(args.json, "w"), indent=1)


if __name__ == "__main__":
    sys.exit(main())
