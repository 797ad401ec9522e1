#!/usr/bin/env python3
"""Do intervals hold across runs? Reads a run folder's bench-N.json and race-N.json (separate
processes of `attnscope bench --json` / `attnscope ab --json`, bench/campaigns/acrossruns.toml)
and prints, per variant, each run's median and interval and how many of the other runs' medians
fall inside it; per race, which pairs of intervals overlap.

  python3 scripts/across_runs.py RUN_FOLDER [PREFIX [RACE_PREFIX]]
      (PREFIX: bench-N.json by default, e.g. warm; RACE_PREFIX: race-N.json by default)

Sharp as well as honest (issue 55): beside coverage it prints the run-to-run spread s of the
medians, the 95% half-width of a rerun that spread implies (1.96·√2·s), and the median printed
half-width over it (at most 1.5 to be sharp).
"""
import statistics
import glob
import json
import os
import re
import sys


def runs(folder, kind):
    out = []
    for path in sorted(glob.glob(os.path.join(folder, f"{kind}-*.json")),
                       key=lambda p: int(re.findall(r"(\d+)\.json$", p)[0])):
        try:
            out.append((os.path.basename(path), json.load(open(path))))
        except (OSError, ValueError) as e:
            print(f"  {os.path.basename(path)}: unreadable ({e})")
    return out


def coverage(points):
    """points: [(median, low, high)]; the other runs' medians inside each interval."""
    inside = total = 0
    for i, (_, lo, hi) in enumerate(points):
        for j, (m, _, _) in enumerate(points):
            if i != j:
                total += 1
                inside += lo <= m <= hi
    return inside, total


def bench_table(folder, prefix="bench"):
    """Each variant's runs: the printed interval (for a rerun, since issue 38) and, where the
    run says it, its own interval alone (run_ci_us), each scored on the other runs' medians."""
    by, own = {}, {}
    for name, d in runs(folder, prefix):
        for r in d.get("results", []):
            lo, hi = (r.get("median_ci_us") or [None, None])[:2]
            if r.get("median_us") is not None and lo is not None and hi is not None:
                by.setdefault(r["variant"], []).append((r["median_us"], lo, hi))
                olo, ohi = (r.get("run_ci_us") or [None, None])[:2]
                if olo is not None and ohi is not None:
                    own.setdefault(r["variant"], []).append((r["median_us"], olo, ohi))
    if not by:
        return
    print("| variant | runs | medians µs (min–max, spread) | s | 1.96·√2·s | interval | half-widths (median) "
          "| median ÷ 1.96·√2·s | other runs' medians inside |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for v, pts in by.items():
        ms = [p[0] for p in pts]
        spread = (max(ms) - min(ms)) / min(ms) * 100
        s_rel = statistics.stdev(ms) / statistics.mean(ms) * 100 if len(ms) > 1 else float("nan")
        need = 1.96 * 2 ** 0.5 * s_rel
        for label, ps in (("printed", pts), ("this run alone", own.get(v))):
            if not ps:
                continue
            hw = [(hi - lo) / 2 / m * 100 for m, lo, hi in ps]
            med = statistics.median(hw)
            inside, total = coverage(ps)
            print(f"| {v} | {len(ps)} | {min(ms):.3f}–{max(ms):.3f} ({spread:.2f}%) | {s_rel:.3f}% | ±{need:.3f}% "
                  f"| {label} | ±{min(hw):.2f}–{max(hw):.2f}% ({med:.3f}%) | {med / need if need else float('nan'):.2f} "
                  f"| {inside} of {total} ({inside / total * 100:.0f}%) |")


def race_table(folder, prefix="race"):
    pts = []
    for name, d in runs(folder, prefix):
        ab = d.get("ab") or {}
        if ab.get("speedup") is not None and ab.get("ci_low") is not None:
            pts.append((ab["speedup"], ab["ci_low"], ab["ci_high"], ab.get("rounds")))
    if not pts:
        return
    print()
    print("| race | speedup | interval | rounds |")
    print("| --- | --- | --- | --- |")
    for i, (s, lo, hi, n) in enumerate(pts, 1):
        print(f"| {i} | {s:.4f} | [{lo:.4f}, {hi:.4f}] | {n} |")
    pairs = [(i, j) for i in range(len(pts)) for j in range(i + 1, len(pts))]
    disjoint = [(i + 1, j + 1) for i, j in pairs if pts[i][2] < pts[j][1] or pts[j][2] < pts[i][1]]
    inside, total = coverage([p[:3] for p in pts])
    sp = [p[0] for p in pts]
    if len(sp) > 1:
        hw = statistics.median([(p[2] - p[1]) / 2 / p[0] * 100 for p in pts])
        print(f"\nspeedups σ {statistics.stdev(sp) / statistics.mean(sp) * 100:.3f}%, "
              f"median half-width ±{hw:.3f}%")
    print(f"\n{len(pairs) - len(disjoint)} of {len(pairs)} pairs of race intervals overlap"
          f"{' (disjoint: ' + ', '.join(f'{a}–{b}' for a, b in disjoint) + ')' if disjoint else ''}; "
          f"other races' speedups inside an interval: {inside} of {total}")


if __name__ == "__main__":
    if len(sys.argv) not in (2, 3, 4) or not os.path.isdir(sys.argv[1]):
        sys.exit(__doc__)
    bench_table(sys.argv[1], *sys.argv[2:3])
    if len(sys.argv) != 3:
        race_table(sys.argv[1], *sys.argv[3:4])
