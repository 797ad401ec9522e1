"""Power, clock and joules a launch for each variant of a bench session
recorded with --telemetry-hz: an NVML sample belongs to the latency batch
whose time span holds it.

Usage: python3 scripts/energy.py SESSION.jsonl[.gz] FLOPS

NVML's power reading is an average over a window longer than a batch, so
when variants' batches alternate their watts blur into each other; the
clocks and throttle reasons are instantaneous. NVML's energy counter cannot
separate them either: on an H100 (driver 580, run 88) it moves every 100 ms
and one read costs 4-5 ms of CPU.
"""
import gzip
import json
import statistics as st
import sys


def main(path, flops):
    with (gzip.open if path.endswith(".gz") else open)(path, "rt") as f:
        ev = [json.loads(line) for line in f]
    tel = [(e["t_us"], e["event"]) for e in ev if e["event"]["type"] == "telemetry"]
    by = {}
    for e in (e for e in ev if e["event"]["type"] == "latency"):
        lat, end = e["event"], e["t_us"]
        start = end - sum(lat["samples_ns"]) / 1e3
        r = by.setdefault(lat["variant"], {"power": [], "clock": [], "ns": [], "reasons": set()})
        for t, x in tel:
            if start <= t <= end:
                r["power"].append(x["power_w"])
                r["clock"].append(x["sm_clock_mhz"])
                r["reasons"].update(x["throttle_reasons"])
        r["ns"] += lat["samples_ns"]
    for v, r in by.items():
        if not r["power"]:
            print(f"{v:32} no NVML sample inside its batches (record with --telemetry-hz)")
            continue
        p, s = st.mean(r["power"]), st.median(r["ns"]) / 1e9
        print(f"{v:32} samples {len(r['power']):3}  power {p:4.0f} W  SM {st.mean(r['clock']):5.0f} MHz"
              f"  p50 {s * 1e6:7.1f} µs  {flops / s / 1e12:5.1f} TFLOP/s  {p * s:5.3f} J a launch"
              f"  throttle: {', '.join(sorted(r['reasons'])) or 'none'}")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], float(sys.argv[2]))
