#!/usr/bin/env python3
"""The D=128 back-to-back question of the cuDNN issue: attnscope's `cudnn`
read 4.4% above PyTorch's cuDNN SDPA kernel there (bench/sdpa_compare.py,
CUPTI both sides). Both are timed here by CUPTI kernel records in the same
duty cycle, alternating three times, with the SM clock beside each:

  attnscope  `bench --variants cudnn` (batches of ~25 ms back to back), its
             per-batch probe clock and throttle flags from the recording
  torch      bursts of calls lasting ~25 ms, each followed by a sync, for
             2 s, under torch.profiler (CUPTI); kernel time per call is the
             attention kernel alone and the whole call (memset included)
  sustained  calls queued without a break for 2 s under one profile: back
             to back as attnscope runs it
  graph      sdpa_compare.py's method: a CUDA graph of 200 calls replayed

NVML's SM clock and clock-event reasons are sampled every 100 ms by
nvidia-smi during each. Inputs: uniform in [-1, 1] on both sides.

  python3 bench/cudnn_d128.py [--bin PATH] [--shape 2,16,2048,128] [--json OUT]
"""
import argparse, json, statistics, subprocess, sys, tempfile, time

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel
from torch.profiler import ProfilerActivity, profile


def nvml_sampler():
    return subprocess.Popen(
        ["nvidia-smi", "--query-gpu=clocks.sm,power.draw,clocks_event_reasons.active",
         "--format=csv,noheader,nounits", "-lms", "100"],
        stdout=subprocess.PIPE, text=True)


def nvml_summary(p):
    p.terminate()
    out = p.communicate()[0]
    clocks, power, reasons = [], [], {}
    for line in out.splitlines():
        parts = [x.strip() for x in line.split(",")]
        if len(parts) < 3:
            continue
        try:
            clocks.append(int(parts[0])); power.append(float(parts[1]))
        except ValueError:
            continue
        reasons[parts[2]] = reasons.get(parts[2], 0) + 1
    if not clocks:
        return {}
    return {"sm_mhz_median": statistics.median(clocks), "sm_mhz_min": min(clocks),
            "power_w_median": statistics.median(power), "reasons": reasons}


def attnscope(binary, shape):
    with tempfile.TemporaryDirectory() as d:
        rec = f"{d}/s.jsonl"
        p = nvml_sampler()
        r = subprocess.run([binary, "bench", "--shape", shape, "--variants", "cudnn", "--max-seconds", "2",
                            "--telemetry-hz", "0", "--json", "--record", rec], capture_output=True, text=True)
        nv = nvml_summary(p)
        row = json.loads(r.stdout)["results"][0]
        clocks, throttled, n = [], 0, 0
        for line in open(rec):
            e = json.loads(line)["event"]
            if e["type"] == "latency":
                n += 1
                if e.get("sm_clock_mhz"):
                    clocks.append(e["sm_clock_mhz"])
                throttled += bool(e.get("throttled"))
    return {"p50_us": row["median_us"], "noise": row.get("noise"), "probe_mhz_median": statistics.median(clocks) if clocks else None,
            "batches": n, "throttled_batches": throttled, "nvml": nv}


def kernel_times(prof):
    att, total = [], 0.0
    for e in prof.events():
        if not str(getattr(e, "device_type", "")).endswith("CUDA"):
            continue
        t = getattr(e, "self_device_time_total", None) or getattr(e, "self_cuda_time_total", 0.0)
        total += t
        if any(w in e.name for w in ("sdpa", "flash", "fmha", "attention")):
            att.append(t)
    return att, total


def torch_bursts(call, burst_s=0.025, total_s=2.0):
    for _ in range(10):
        call()
    torch.cuda.synchronize()
    t0 = time.perf_counter(); call(); torch.cuda.synchronize()
    per = max(time.perf_counter() - t0, 1e-5)
    n = max(1, int(burst_s / per))
    p = nvml_sampler()
    per_call, whole = [], []
    end = time.perf_counter() + total_s
    while time.perf_counter() < end:
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            for _ in range(n):
                call()
            torch.cuda.synchronize()
        att, total = kernel_times(prof)
        per_call.extend(att)
        whole.append(total / n)
    return {"kernel_p50_us": statistics.median(per_call), "call_us": statistics.median(whole),
            "calls": len(per_call), "burst_calls": n, "nvml": nvml_summary(p)}


def torch_sustained(call, total_s=2.0):
    """Back to back as attnscope's bench runs it: calls queued without a
    break for `total_s` (one profile around all of them, so the profiler's
    own work comes after, not between)."""
    for _ in range(10):
        call()
    torch.cuda.synchronize()
    t0 = time.perf_counter(); call(); torch.cuda.synchronize()
    n = max(1, int(total_s / max(time.perf_counter() - t0, 1e-5)))
    p = nvml_sampler()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(n):
            call()
        torch.cuda.synchronize()
    att, total = kernel_times(prof)
    return {"kernel_p50_us": statistics.median(att), "call_us": total / n, "calls": n, "nvml": nvml_summary(p)}


def torch_graph(call, calls=200, rounds=5):
    for _ in range(20):
        call()
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        for _ in range(3):
            call()
    torch.cuda.current_stream().wait_stream(stream)
    with torch.cuda.graph(graph):
        for _ in range(calls):
            call()
    graph.replay(); torch.cuda.synchronize()
    p = nvml_sampler()
    att_all, whole = [], []
    for _ in range(rounds):
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            graph.replay()
            torch.cuda.synchronize()
        att, total = kernel_times(prof)
        att_all.extend(att)
        whole.append(total / calls)
    return {"kernel_p50_us": statistics.median(att_all) if att_all else None, "call_us": statistics.median(whole),
            "nvml": nvml_summary(p)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=".carry/attnscope")
    ap.add_argument("--shape", default="2,16,2048,128")
    ap.add_argument("--json")
    args = ap.parse_args()
    b, h, s, d = (int(x) for x in args.shape.split(","))
    g = torch.Generator(device="cuda").manual_seed(1)
    q, k, v = (torch.rand(b, h, s, d, device="cuda", dtype=torch.float16, generator=g) * 2 - 1 for _ in range(3))

    def call():
        with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
            return F.scaled_dot_product_attention(q, k, v)

    print(f"torch {torch.__version__}, cuDNN {torch.backends.cudnn.version()}, {torch.cuda.get_device_name()}, shape {args.shape}")
    rows = []
    for rnd in range(3):
        for side in ("attnscope", "sustained", "torch", "graph"):
            if side == "attnscope":
                r = attnscope(args.bin, args.shape)
                us = r["p50_us"]
            elif side == "torch":
                r = torch_bursts(call)
                us = r["kernel_p50_us"]
            elif side == "sustained":
                r = torch_sustained(call)
                us = r["kernel_p50_us"]
            else:
                r = torch_graph(call)
                us = r["kernel_p50_us"]
            r.update({"round": rnd + 1, "side": side})
            rows.append(r)
            nv = r.get("nvml") or {}
            extra = (f" probe {r['probe_mhz_median']} MHz, {r['throttled_batches']}/{r['batches']} batches throttled"
                     if side == "attnscope" else f" whole call {r['call_us']:.2f} µs")
            print(f"round {rnd + 1} {side:<10} {us:8.2f} µs kernel;{extra}; NVML SM {nv.get('sm_mhz_median')} MHz "
                  f"(min {nv.get('sm_mhz_min')}), {nv.get('power_w_median')} W, reasons {nv.get('reasons')}", flush=True)
    a = statistics.mean(r["p50_us"] for r in rows if r["side"] == "attnscope")
    t = statistics.mean(r["kernel_p50_us"] for r in rows if r["side"] == "torch")
    gr = statistics.mean(r["kernel_p50_us"] for r in rows if r["side"] == "graph")
    su = statistics.mean(r["kernel_p50_us"] for r in rows if r["side"] == "sustained")
    print(f"\nmeans over 3 rounds: attnscope {a:.2f} µs; torch sustained {su:.2f} µs ({a / su:.4f}×), "
          f"bursts {t:.2f} µs ({a / t:.4f}×), graph {gr:.2f} µs ({a / gr:.4f}×)")
    if args.json:
        json.dump(rows, open(args.json, "w"), indent=1)


if __name__ == "__main__":
    sys.exit(main())
