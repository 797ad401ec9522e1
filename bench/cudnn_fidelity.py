#!/usr/bin/env python3
"""Issue 18's fidelity table: attnscope's `cudnn` variant against PyTorch's
cuDNN SDPA kernel, both sustained back to back, in alternating rounds.

Both sides are timed by CUPTI kernel records (attnscope bench's timer;
torch.profiler's CUDA activity), the attention kernel alone, fp16, inputs
uniform in [-1, 1] on both sides (the kernel's time depends on the data).
What makes the two sides comparable on an H100 that reaches its power cap:
  * no host gaps on either side: PyTorch replays a CUDA graph of calls (Python
    launching one call at a time cannot keep up with a 7 µs kernel, and a
    kernel launched onto an idle GPU runs ~0.25 µs longer);
  * the same sustained load before measuring: PyTorch replays the graph for
    --warm seconds unprofiled, then a profiled tail; attnscope runs
    `bench --warm-seconds` first, in its own batches;
  * alternating rounds (torch, attnscope, torch, ...), a ratio per round, the
    median reported, with each window's SM clock and power from nvidia-smi.

  python3 bench/cudnn_fidelity.py [--bin PATH] [--rounds 3] [--warm 2] [--json OUT]
"""
import argparse, json, statistics, subprocess, sys, threading, time

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel
from torch.profiler import ProfilerActivity, profile

SHAPES = [  # (B, H, S, D, causal): issue 18's four
    (2, 8, 512, 64, False),
    (2, 8, 512, 64, True),
    (4, 16, 4096, 64, False),
    (2, 16, 2048, 128, False),
]
# At most this many kernels in a profiled tail: the profiler keeps every record.
MAX_PROFILED = 20_000


class Smi:
    """nvidia-smi sampling SM clock, power and clock-event reasons every 100 ms
    while a window runs."""

    def __enter__(self):
        self.p = subprocess.Popen(
            ["nvidia-smi", "-i", str(torch.cuda.current_device()), "--query-gpu=clocks.sm,power.draw,clocks_event_reasons.active",
             "--format=csv,noheader,nounits", "-lms", "100"],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        self.rows = []
        self.t = threading.Thread(target=self._read, daemon=True)
        self.t.start()
        return self

    def _read(self):
        for line in self.p.stdout:
            parts = [x.strip() for x in line.split(",")]
            try:
                self.rows.append((float(parts[0]), float(parts[1]), int(parts[2], 16), time.perf_counter()))
            except (ValueError, IndexError):
                pass

    def __exit__(self, *exc):
        self.p.terminate()
        self.p.wait()
        self.t.join(timeout=1)

    def summary(self, start, end):
        """Means over the samples taken while [start, end] (perf_counter) was
        measured; the nearest sample when none fell inside."""
        rows = [r for r in self.rows if start <= r[3] <= end]
        if not rows and self.rows:
            rows = [min(self.rows, key=lambda r: abs(r[3] - (start + end) / 2))]
        if not rows:
            return {"mhz": None, "watts": None, "capped": None}
        return {"mhz": statistics.mean(r[0] for r in rows), "watts": statistics.mean(r[1] for r in rows),
                "capped": sum(1 for r in rows if r[2] & 0x4) / len(rows)}


def is_attention(name):
    return any(w in name for w in ("sdpa", "flash", "fmha", "attention"))


def torch_window(shape, warm_s):
    """The attention kernel's median µs over a profiled tail that follows
    `warm_s` of unprofiled graph replays (one host synchronization apart,
    tens of microseconds, so the window is known); the GPU's busy
    share over the tail; the kernel count (checks nothing else was counted)."""
    b, h, s, d, causal = shape
    gen = torch.Generator(device="cuda").manual_seed(1)
    q, k, v = (torch.rand(b, h, s, d, device="cuda", dtype=torch.float16, generator=gen) * 2 - 1 for _ in range(3))

    def call():
        with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
            return F.scaled_dot_product_attention(q, k, v, is_causal=causal)

    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            call()
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(20):
        call()
    torch.cuda.synchronize()
    per_call_s = (time.perf_counter() - t0) / 20  # an upper bound (host-bound at small shapes)
    calls = max(1, min(2000, int(5e-3 / per_call_s)))  # a graph of about 5 ms or more
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for _ in range(calls):
            call()
    graph.replay()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    graph.replay()
    torch.cuda.synchronize()
    replay_s = time.perf_counter() - t0
    warm_replays = max(1, int(warm_s / replay_s))
    tail_replays = max(1, min(MAX_PROFILED // calls, int(1.0 / replay_s)))
    for _ in range(warm_replays):  # queued; the GPU is still busy with them when profiling starts
        graph.replay()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        torch.cuda.current_stream().synchronize()  # the warm load ends; the tail follows at once
        window = [time.perf_counter()]
        for _ in range(tail_replays):
            graph.replay()
        torch.cuda.synchronize()
        window.append(time.perf_counter())
    spans = []
    for e in prof.events():
        if not str(getattr(e, "device_type", "")).endswith("CUDA"):
            continue
        tr = e.time_range
        spans.append((tr.start, tr.end, e.name))
    att = [end - start for start, end, name in spans if is_attention(name)]
    if not spans or not att:
        return {"error": "no CUDA kernel records in the profile"}
    first = min(sp[0] for sp in spans)
    last = max(sp[1] for sp in spans)
    busy = sum(end - start for start, end, _ in spans) / max(last - first, 1e-9)
    return {"kernel_us": statistics.median(att), "kernels": len(att), "expected": tail_replays * calls,
            "busy": busy, "graph_calls": calls, "window": window}


def attnscope_window(binary, shape, warm_s):
    b, h, s, d, causal = shape
    cmd = [binary, "bench", "--shape", f"{b},{h},{s},{d}", "--variants", "cudnn", "--warm-seconds", str(warm_s),
           "--max-seconds", "2", "--telemetry-hz", "0", "--inputs", "uniform", "--json"] + (["--causal"] if causal else [])
    p = subprocess.run(cmd, capture_output=True, text=True)
    ended = time.perf_counter()
    if not p.stdout.strip():
        return {"error": p.stderr.strip()[-300:]}
    out = json.loads(p.stdout)
    if out.get("timer") != "cupti":
        sys.exit(f"attnscope timed with {out.get('timer')}, not CUPTI: the comparison has no common referee")
    r = out["results"][0]
    if "median_us" not in r:
        return {"error": r.get("error", "no median")}
    # Kernel time over the sampling's wall time, the host's work between
    # batches (records, clock probe, stopping rule) included.
    busy = r["samples"] * r["median_us"] * 1e-6 / r["wall_s"] if r.get("wall_s") else None
    # Sampling ended just before the process did.
    return {"kernel_us": r["median_us"], "ci_us": r["median_ci_us"], "busy": busy, "warm_s": r.get("warm_s"),
            "window": [ended - r["wall_s"] - 0.2, ended - 0.2]}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=".carry/attnscope")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--warm", type=float, default=2.0, help="seconds of sustained load before each window")
    ap.add_argument("--json", help="also write the rows as JSON here")
    args = ap.parse_args()
    print(f"torch {torch.__version__}, {torch.cuda.get_device_name()}, cuDNN {torch.backends.cudnn.version()}")
    print("µs = the attention kernel's median (CUPTI records), back to back after the warm load; "
          "MHz / W / cap = nvidia-smi over the window")
    rows = []
    for shape in SHAPES:
        label = "B{} H{} S{} D{}{}".format(*shape[:4], " causal" if shape[4] else "")
        for r in range(args.rounds):
            pair = {}
            for side in ("torch", "attnscope") if r % 2 == 0 else ("attnscope", "torch"):
                with Smi() as smi:
                    res = torch_window(shape, args.warm) if side == "torch" else attnscope_window(args.bin, shape, args.warm)
                if "window" in res:
                    res.update(smi.summary(*res["window"]))
                pair[side] = res
            t, a = pair["torch"], pair["attnscope"]
            ratio = a["kernel_us"] / t["kernel_us"] if "kernel_us" in a and "kernel_us" in t else float("nan")
            rows.append({"shape": label, "round": r + 1, "torch": t, "attnscope": a, "ratio": ratio})
            fmt = lambda x: "n/a" if x is None else f"{x:.0f}"
            pct = lambda x: "n/a" if x is None else f"{x:.0%}"
            if "error" in t or "error" in a:
                print(f"{label:<22} round {r + 1}: torch {t.get('error', 'ok')} / attnscope {a.get('error', 'ok')}")
                continue
            print(f"{label:<22} round {r + 1}  torch {t['kernel_us']:8.2f} µs ({t['kernels']}/{t['expected']} kernels, "
                  f"busy {t['busy']:.1%}, {fmt(t.get('mhz'))} MHz {fmt(t.get('watts'))} W cap {pct(t.get('capped'))})  "
                  f"attnscope {a['kernel_us']:8.2f} µs (busy {a['busy']:.1%}, {fmt(a.get('mhz'))} MHz {fmt(a.get('watts'))} W "
                  f"cap {pct(a.get('capped'))})  ratio {ratio:.4f}")
    print(f"\n{'shape':<22} {'attnscope ÷ torch per round':<34} {'median':>7}  within 3%")
    for label in dict.fromkeys(r["shape"] for r in rows):
        rs = [r["ratio"] for r in rows if r["shape"] == label]
        med = statistics.median(rs)
        print(f"{label:<22} {' '.join(f'{x:.4f}' for x in rs):<34} {med:7.4f}  {'yes' if abs(med - 1) <= 0.03 else 'NO'}")
    if args.json:
        json.dump({"torch": torch.__version__, "cudnn": torch.backends.cudnn.version(),
                   "gpu": torch.cuda.get_device_name(), "warm_s": args.warm, "rows": rows}, open(args.json, "w"), indent=1)


if __name__ == "__main__":
    sys.exit(main())
