#!/usr/bin/env python3
"""py-crosscheck.sh's table for one shape and regime: each variant's ratio to cuDNN from attnscope's bench
JSON and from Nsight Compute's CSV, their difference, and how much longer Nsight Compute reads a kernel
than attnscope's CUPTI timer does.

  python3 scripts/py_crosscheck_table.py OUT TAG TITLE COUNT REGIME cudnn VARIANT...

OUT holds bench-TAG-REGIME.json and ncu-TAG-REGIME-VARIANT.csv (py-crosscheck.sh writes them).

Why the last column: on calls of a few microseconds Nsight Compute's gpu__time_duration reads every kernel
longer than CUPTI's activity record of the same launch (run147: cuDNN's kernel 8.22 µs against 7.35 µs).
An offset c common to both sides pulls a ratio r toward 1 by about (r - 1)·c / (cuDNN + c), so a 1.6×
ratio of 8 µs calls loses several percent under Nsight Compute while the two timers agree on everything
else; the column shows the offset per kernel so a reader can tell that from a timing disagreement.

When the CSV also holds gpc__cycles_elapsed.max and gpc__cycles_elapsed.avg.per_second (py-crosscheck.sh
collects them), a second Nsight Compute reading follows each row: the kernel's elapsed GPC cycles over the
clock rate ncu measured during it, a time that does not hold ncu's timestamps around the launch. When OUT
holds ncu_floor.py's readings of an empty kernel (floor-cupti.txt, ncu-floor-CACHE.csv), a third reading
takes the difference between the two tools on that kernel, Nsight Compute's own cost, off every kernel on
both sides of the ratio (run155: 0.64 µs with L2 left alone, 0.88 µs with it flushed).
"""
import csv
import json
import statistics
import sys


CYCLES, RATE = "gpc__cycles_elapsed.max", "gpc__cycles_elapsed.avg.per_second"


def ncu_per_call(out, tag, regime, v, count, cycles=False):
    """(median over the last `count` calls of the summed kernel times in ns, kernels a call, why). A call's
    kernels are found as the shortest period k that the last count*k kernel names repeat with (the launches
    are identical). With `cycles`, a kernel's time is its elapsed cycles over its clock rate (None when the
    CSV lacks them)."""
    path = f"{out}/ncu-{tag}-{regime}-{v.replace(':', '_').replace('@', '_').replace('+', '_')}.csv"
    try:
        rows = [r for r in csv.reader(open(path)) if r]
    except OSError as e:
        return None, 0, f"no ncu file ({e})"
    head = next((i for i, r in enumerate(rows) if "Kernel Name" in r), None)
    if head is None:
        return None, 0, "ncu profiled no kernel"
    names = rows[head]
    num = lambda r, i: float(r[i].replace(",", ""))
    ki = names.index("Kernel Name")
    if cycles:
        if CYCLES not in names or RATE not in names:
            return None, 0, "no cycle counts"
        ci, ri = names.index(CYCLES), names.index(RATE)
        # the rate's unit: hz under --print-units base (run155), else cycle/second, /usecond or /nsecond
        unit = rows[head + 1][ri].lower()
        scale = next((s for u, s in (("ghz", 1.0), ("mhz", 1e3), ("khz", 1e6), ("hz", 1e9), ("nsecond", 1.0),
                                     ("usecond", 1e3), ("msecond", 1e6), ("second", 1e9)) if u in unit), None)
        if scale is None:
            return None, 0, f"cycle rate in an unknown unit ({unit})"
        try:
            kern = [(r[ki], num(r, ci) / num(r, ri) * scale) for r in rows[head + 2:] if len(r) > max(ci, ri)]
        except (ValueError, ZeroDivisionError):
            return None, 0, "a cycle count or rate is missing"
    else:
        ti = names.index("gpu__time_duration.sum")
        try:
            kern = [(r[ki], num(r, ti)) for r in rows[head + 2:] if len(r) > ti]
        except ValueError:
            return None, 0, "a kernel's gpu__time_duration is missing"
    for k in range(1, 9):
        tail = kern[-count * k:]
        if len(tail) == count * k and all(tail[i][0] == tail[i % k][0] for i in range(len(tail))):
            calls = [sum(t for _, t in tail[c * k:(c + 1) * k]) for c in range(count)]
            return statistics.median(calls), k, f"{k} kernel(s) a call"
    return None, 0, "the last launches' kernels do not repeat: not one call per launch"


def bench(out, tag, regime):
    try:
        d = json.load(open(f"{out}/bench-{tag}-{regime}.json"))
    except (OSError, ValueError) as e:
        return {}, f"bench failed ({e})"
    return {r["variant"]: r["median_us"] for r in d.get("results", []) if r.get("correct")}, ""


def ncu_floor(out, cache):
    """How much longer Nsight Compute reads an empty kernel than CUPTI does, in ns (ncu_floor.py's readings,
    py-crosscheck.sh writes them), or None."""
    try:
        cupti = float(open(f"{out}/floor-cupti.txt").read().split()[0])
        rows = [r for r in csv.reader(open(f"{out}/ncu-floor-{cache}.csv")) if r]
    except (OSError, ValueError, IndexError):
        return None
    head = next((i for i, r in enumerate(rows) if "gpu__time_duration.sum" in r), None)
    if head is None:
        return None
    ti = rows[head].index("gpu__time_duration.sum")
    times = [float(r[ti].replace(",", "")) for r in rows[head + 2:] if len(r) > ti]
    return statistics.median(times[-50:]) - cupti if times else None


def rows(ours, variants, per_call, base, base_k, label):
    """One line per variant: attnscope's ratio, Nsight Compute's (from per_call(v) = (ns, kernels, why)),
    their difference against the 3% target, and how much longer ncu reads each kernel."""
    offset = lambda t, us, k: (t / 1e3 - us) / k
    fmt = lambda x: "—" if x is None else f"{x:.3f}"
    for v in variants:
        t, k, why = per_call(v)
        a = ours[v] / ours["cudnn"] if v in ours else None
        n = t / base if t is not None else None
        if a is None or n is None:
            print(f"  {v:<22} {fmt(a):>9} {fmt(n):>7} {'':>7}  --  {why if n is None else 'not in bench'}")
            continue
        d = (a - n) / n
        print(f"  {v:<22} {fmt(a):>9} {fmt(n):>7} {d * 100:+6.2f}%  {'ok' if abs(d) <= 0.03 else 'OFF'}  "
              f"{offset(t, ours[v], k):+6.2f} µs/k  ({label or why})")


def main(argv):
    if len(argv) < 7:
        print("usage: py_crosscheck_table.py OUT TAG TITLE COUNT REGIME cudnn VARIANT...", file=sys.stderr)
        return 2
    out, tag, title, count, regime, *variants = argv[1:]
    count = int(count)
    cache = "none" if regime == "back-to-back" else "all"
    ours, err = bench(out, tag, regime)
    base, base_k, why = ncu_per_call(out, tag, regime, "cudnn", count)
    print(f"\n== {title}: ÷ cuDNN, attnscope {regime} against Nsight Compute --cache-control {cache} "
          f"({count} launches)")
    if base is None or "cudnn" not in ours:
        print(f"  cuDNN: {why} {err}".rstrip())
        return 0
    over = lambda t, k: (t / 1e3 - ours["cudnn"]) / k
    print(f"  {'variant':<22} {'attnscope':>9} {'ncu':>7} {'Δ':>7}  ok  {'ncu longer':>11}  "
          f"(ncu: cuDNN {base / 1e3:.2f} µs, {over(base, base_k):+.2f} µs a kernel over attnscope)")
    if regime == "back-to-back" and base_k * over(base, base_k) < -0.02 * ours["cudnn"]:
        # ncu can only add to a kernel; reading it shorter means the GPU itself ran slower in attnscope's run
        print(f"  Nsight Compute reads cuDNN {-100 * over(base, base_k) * base_k / ours['cudnn']:.0f}% shorter than "
              f"attnscope back to back: sustained load has slowed the clock (ncu runs each kernel after an idle "
              f"gap), so at this size the isolated pairing is the like-for-like one (run157, run158)")
    time = lambda v: ncu_per_call(out, tag, regime, v, count)
    rows(ours, variants[1:], time, base, base_k, "")
    cycles = lambda v: ncu_per_call(out, tag, regime, v, count, cycles=True)
    cbase, cbase_k, _ = cycles("cudnn")
    if cbase is not None:
        print(f"  Nsight Compute's elapsed cycles over its clock rate instead (cuDNN {cbase / 1e3:.2f} µs, "
              f"{over(cbase, cbase_k):+.2f} µs a kernel over attnscope):")
        rows(ours, variants[1:], cycles, cbase, cbase_k, "cycles")
    floor = ncu_floor(out, cache)
    if floor is not None and base - base_k * floor > 0:
        # the same cost taken off every kernel on both sides of the ratio, measured away from them
        less = lambda v: (lambda t, k, why: (None if t is None else t - k * floor, k, why))(*time(v))
        fbase = base - base_k * floor
        print(f"  Nsight Compute less its own cost per kernel, {floor / 1e3:+.2f} µs over CUPTI on an empty "
              f"kernel (cuDNN {fbase / 1e3:.2f} µs, {over(fbase, base_k):+.2f} µs a kernel over attnscope):")
        rows(ours, variants[1:], less, fbase, base_k, "less the empty kernel's")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
