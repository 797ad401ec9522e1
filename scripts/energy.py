"""Power, clock and joules a launch for each variant of a bench session
recorded with --telemetry-hz (sessions of attnscope 0.x with `energy_mj`).

Usage: python3 scripts/energy.py SESSION.jsonl[.gz] FLOPS

Two estimates per variant:
  sampled   NVML's power reading at the samples inside the variant's latency
            batches, times its median launch. NVML averages power over a
            window longer than a batch, so alternating variants blur.
  counter   NVML's energy counter: between two consecutive samples the
            joules are split over the variants (and idle time) by how long
            each ran in that interval, and each variant's watts are fitted
            by least squares over every interval. The fit's standard error
            comes from the residuals; the counter's own step (how often it
            changed between samples) is printed, since a counter that moves
            less often than the batches alternate cannot tell them apart.
"""
import gzip
import json
import statistics as st
import sys


def solve(m, y):
    """m x = y by Gauss-Jordan with partial pivoting; None if singular."""
    n = len(y)
    a = [row[:] + [y[i]] for i, row in enumerate(m)]
    for c in range(n):
        p = max(range(c, n), key=lambda r: abs(a[r][c]))
        if abs(a[p][c]) < 1e-12:
            return None
        a[c], a[p] = a[p], a[c]
        for r in range(n):
            if r != c:
                f = a[r][c] / a[c][c]
                a[r] = [x - f * z for x, z in zip(a[r], a[c])]
    return [a[i][n] / a[i][i] for i in range(n)]


def least_squares(rows, b):
    """Weights, their standard errors, the row count and the mean squared
    residual, or None."""
    k = len(rows[0])
    ata = [[sum(r[i] * r[j] for r in rows) for j in range(k)] for i in range(k)]
    atb = [sum(r[i] * y for r, y in zip(rows, b)) for i in range(k)]
    w = solve(ata, atb)
    if w is None or len(b) <= k:
        return None
    resid = [y - sum(x * c for x, c in zip(r, w)) for r, y in zip(rows, b)]
    sse = sum(e * e for e in resid)
    var = sse / (len(b) - k)
    inv = [solve(ata, [1.0 if i == j else 0.0 for i in range(k)]) for j in range(k)]
    return w, [(inv[i][i] * var) ** 0.5 for i in range(k)], len(b), sse / len(b)


def load(path):
    with (gzip.open if path.endswith(".gz") else open)(path, "rt") as f:
        return [json.loads(line) for line in f]


def fit_counter(pts, spans, variants):
    """Each variant's watts (and idle's, where there was idle) from the
    counter: one row per interval between consecutive samples, inside the
    batches' time (warm-up and teardown left out)."""
    rows, dj = [], []
    lo, hi = spans[0][1], spans[-1][2]
    for (t0, e0), (t1, e1) in zip(pts, pts[1:]):
        if t1 <= lo or t0 >= hi:
            continue
        over = [0.0] * len(variants)
        for v, s, e in spans:
            over[variants.index(v)] += max(0.0, min(e, t1) - max(s, t0)) / 1e6
        rows.append(over + [max(0.0, (t1 - t0) / 1e6 - sum(over))])
        dj.append((e1 - e0) / 1e3)
    if rows and max(r[-1] for r in rows) < 1e-3:
        rows = [r[:-1] for r in rows]  # no idle seen: it cannot be fitted
    return least_squares(rows, dj) if rows else None


def main(path, flops):
    ev = load(path)
    tel = [(e["t_us"], e["event"]) for e in ev if e["event"]["type"] == "telemetry"]
    batches = []  # (variant, start_us, end_us, samples_ns)
    for e in ev:
        if e["event"]["type"] == "latency":
            lat, end = e["event"], e["t_us"]
            batches.append((lat["variant"], end - sum(lat["samples_ns"]) / 1e3, end, lat["samples_ns"]))
    variants = sorted({b[0] for b in batches}, key=[b[0] for b in batches].index)
    by = {v: {"power": [], "clock": [], "ns": [], "reasons": set()} for v in variants}
    for v, start, end, ns in batches:
        r = by[v]
        for t, x in tel:
            if start <= t <= end:
                r["power"].append(x["power_w"])
                r["clock"].append(x["sm_clock_mhz"])
                r["reasons"].update(x["throttle_reasons"])
        r["ns"] += ns

    # The counter: one row per interval between consecutive samples that
    # both carry it, one column per variant plus idle.
    pts = [(t, x["energy_mj"]) for t, x in tel if x.get("energy_mj") is not None]
    fit, shift = None, 0
    if len(pts) > len(variants) + 2:
        # The batches' spans are stamped by the host; the fit is tried with
        # them moved by up to ±40 ms and the shift with the least residual
        # kept (and printed: far from 0 says the spans and samples disagree).
        for d in range(-40_000, 40_001, 2_000):
            f = fit_counter(pts, [(v, s + d, e + d) for v, s, e, _ in batches], variants)
            if f and (fit is None or f[3] < fit[3]):
                fit, shift = f, d
        steps = [t1 - t0 for (t0, e0), (t1, e1) in zip(pts, pts[1:]) if e1 != e0]
        same = sum(1 for (_, e0), (_, e1) in zip(pts, pts[1:]) if e1 == e0)
        print(f"energy counter: {len(pts)} samples, {same} intervals without a change"
              f"{f', median {st.median(steps) / 1e3:.1f} ms between changes' if steps else ''}")
    else:
        print("energy counter: not in this session (attnscope before energy_mj, or NVML without it)")

    for i, v in enumerate(variants):
        r = by[v]
        s = st.median(r["ns"]) / 1e9
        p = st.mean(r["power"]) if r["power"] else float("nan")
        line = (f"{v:32} samples {len(r['power']):3}  power {p:4.0f} W  SM {st.mean(r['clock']) if r['clock'] else float('nan'):5.0f} MHz"
                f"  p50 {s * 1e6:7.1f} µs  {flops / s / 1e12:5.1f} TFLOP/s  sampled {p * s:5.3f} J")
        if fit:
            w, se, n, _ = fit
            line += f"  counter {w[i]:4.0f} ± {se[i]:.0f} W, {w[i] * s:5.3f} ± {se[i] * s:.3f} J a launch"
        print(line + f"  throttle: {', '.join(sorted(r['reasons'])) or 'none'}")
    if fit:
        w, se, n, _ = fit
        idle = f"idle between batches {w[-1]:4.0f} ± {se[-1]:.0f} W, " if len(w) > len(variants) else ""
        print(f"counter fit: {idle}{n} intervals, batch spans moved {shift / 1e3:+.0f} ms")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], float(sys.argv[2]))
