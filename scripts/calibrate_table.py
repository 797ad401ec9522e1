#!/usr/bin/env python3
"""The table of `attnscope selftest --calibrate --json`, one file or several pieces merged (each piece
run with its own --seed base, so no seed repeats): per variant and format, the checks, false failures,
errors (a library refusing a shape at run time), each check's worst row error in units of the format
(p50, p99, max; the row bound is 2), the worst element over its bound and the worst pooled mean over what
rounding explains (1 fails).
    python3 scripts/calibrate_table.py calibrate.json [more.json ...]
"""
import json
import sys

BIN = 0.01


def quantile(hist, q):
    n = sum(hist)
    if n == 0:
        return None
    want = q * (n - 1)
    seen = 0
    for i, c in enumerate(hist):
        seen += c
        if seen > want:
            return (i + 1) * BIN  # the bin's upper edge: never under the true value
    return len(hist) * BIN


def merge(docs):
    rows, order = {}, []
    for d in docs:
        for r in d["by_variant"]:
            key = (r["variant"], r["dtype"])
            if key not in rows:
                order.append(key)
                rows[key] = {"checks": 0, "false_failures": 0, "failures": [], "errors": [], "hist": None,
                             "row_units_max": None, "worst_element_ratio": 0.0, "pooled_max_ratio": 0.0}
            m = rows[key]
            m["checks"] += r["checks"]
            m["false_failures"] += r["false_failures"]
            m["failures"] += r["failures"]
            m["errors"] += r["errors"]
            h = r.get("row_units_hist_0_01u")
            if h is not None:
                m["hist"] = h if m["hist"] is None else [a + b for a, b in zip(m["hist"], h)]
            if r["row_units_max"] is not None:
                m["row_units_max"] = max(m["row_units_max"] or 0.0, r["row_units_max"])
            m["worst_element_ratio"] = max(m["worst_element_ratio"], r["worst_element_ratio"] or 0.0)
            m["pooled_max_ratio"] = max(m["pooled_max_ratio"], r["pooled_max_ratio"] or 0.0)
            if len(docs) == 1:
                m["p50"], m["p99"] = r["row_units_p50"], r["row_units_p99"]
    for m in rows.values():
        if "p50" not in m:
            m["p50"] = quantile(m["hist"], 0.5) if m["hist"] else None
            m["p99"] = quantile(m["hist"], 0.99) if m["hist"] else None
    return [(k, rows[k]) for k in order]


def main(paths):
    docs = [json.load(open(p)) for p in paths]
    checks = sum(d["checks"] for d in docs)
    failed = sum(d["false_failures"] for d in docs)
    seeds = sum(d["seeds"] for d in docs)
    secs = sum(d["seconds"] for d in docs)
    bases = ", ".join(str(d["base_seed"]) for d in docs)
    print(f"calibration on {docs[0]['gpu']['name']}: {seeds} whole seeds (bases {bases}) x "
          f"{len(docs[0]['shapes'])} shapes, {checks} checks in {secs:.0f} s, false failures {failed}")
    if len(docs) > 1:
        print("(merged: p50 and p99 from 0.01u bins, read at the bin's upper edge)")
    print("| variant | type | checks | false failures | errors | row err p50 (u) | p99 | max | element | pooled |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    rows = merge(docs)
    f = lambda x: "—" if x is None else f"{x:.3f}"
    for (variant, dtype), r in rows:
        if r["checks"] == 0 and not r["errors"]:
            continue
        print(f"| {variant} | {dtype} | {r['checks']} | {r['false_failures']} | {len(r['errors'])} | "
              f"{f(r['p50'])} | {f(r['p99'])} | {f(r['row_units_max'])} | "
              f"{f(r['worst_element_ratio'])} | {f(r['pooled_max_ratio'])} |")
    for (variant, dtype), r in rows:
        for x in r["failures"][:3]:
            print(f"FAIL {variant} {dtype}: {x['what']}")
        for e in r["errors"][:2]:
            print(f"error {variant} {dtype}: {e}")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
