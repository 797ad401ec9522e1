#!/usr/bin/env python3
"""The regime table from one run of the `regimes` campaign: each variant's
median (with its 95% interval) back to back, interleaved (raced against
scalar) and isolated, its ratio to cuDNN in the same regime, and the
isolated regime taken apart (gap, L2, the scrub's carveout).

  python3 scripts/regime_table.py OUTDIR
"""
import glob, json, os, sys


def load(path):
    try:
        return json.load(open(path))
    except (OSError, ValueError):
        return None


def bench_rows(path):
    d = load(path)
    if not d:
        return {}
    if d.get("timer") != "cupti":
        print(f"WARNING: {os.path.basename(path)} was timed with {d.get('timer')}, not CUPTI")
    return {r["variant"]: r for r in d["results"] if "median_us" in r}


def fmt(r):
    if not r:
        return "—"
    lo, hi = r.get("median_ci_us") or [None, None]
    half = (hi - lo) / 2 if lo is not None and hi is not None else float("nan")
    return f"{r['median_us']:.2f} ±{half:.2f}"


def main(out):
    b2b = bench_rows(os.path.join(out, "regime-back-to-back.json"))
    iso = bench_rows(os.path.join(out, "regime-isolated.json"))
    inter = {}
    for p in glob.glob(os.path.join(out, "interleaved-*.json")):
        d = load(p)
        if d and "ab" in d:
            ab = d["ab"]
            b = ab["b"]
            name = "cudnn" if b.get("toggles", {}).get("cudnn") else None
            key = os.path.basename(p)[len("interleaved-"):-len(".json")]
            inter[name or key] = {"median_us": ab["p50_b_ns"] / 1e3, "median_ci_us": None,
                                  "vs_scalar": ab["speedup"], "ci": (ab["ci_low"], ab["ci_high"])}
            inter.setdefault("scalar", {"median_us": ab["p50_a_ns"] / 1e3, "median_ci_us": None})
    variants = [v for v in b2b if v != "cudnn"] + ["cudnn"]
    print(f"{'variant':<28} {'back-to-back µs':>17} {'interleaved µs':>15} {'isolated µs':>15}   "
          f"÷ cuDNN: b2b / interleaved / isolated")
    for v in variants:
        rows = [b2b.get(v), inter.get(v), iso.get(v)]
        cud = [b2b.get("cudnn"), inter.get("cudnn"), iso.get("cudnn")]
        ratios = []
        for r, c in zip(rows, cud):
            ratios.append(f"{r['median_us'] / c['median_us']:.3f}" if r and c else "—")
        middle = f"{rows[1]['median_us']:.2f}" if rows[1] else "—"
        print(f"{v:<28} {fmt(rows[0]):>17} {middle:>15} {fmt(rows[2]):>15}   {' / '.join(ratios)}")
    print("\nisolated, taken apart (median µs; each row one bench run):")
    configs = sorted(glob.glob(os.path.join(out, "iso-*.json"))) + [os.path.join(out, "b2b-cold.json")]
    names = None
    for p in configs:
        rows = bench_rows(p)
        if not rows:
            continue
        if names is None:
            names = list(rows)
            print(f"{'config':<34}" + "".join(f"{n[:24]:>26}" for n in names))
        label = os.path.basename(p)[:-5]
        if label.startswith("iso-"):
            gap, l2, carve = label[4:].split("-")
            label = f"gap {gap} µs, L2 {l2}" + (f", scrub carveout {carve}%" if carve != "x" else "")
        else:
            label = "back-to-back, L2 emptied (no gap)"
        print(f"{label:<34}" + "".join(f"{fmt(rows.get(n)):>26}" for n in names))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ".")
