#!/usr/bin/env python3
"""The table of `attnscope selftest --calibrate --json`: per variant and format, the checks, false failures,
errors (a library refusing a shape at run time), each check's worst row error in units of the format
(p50, p99, max; the row bound is 4), the worst element over its bound and the worst pooled mean over what
rounding explains (1 fails).
    python3 scripts/calibrate_table.py calibrate.json
"""
import json
import sys


def main(path):
    d = json.load(open(path))
    print(f"calibration on {d['gpu']['name']}: {d['seeds']} seeds from {d['base_seed']} x {len(d['shapes'])} shapes, "
          f"{d['checks']} checks in {d['seconds']:.0f} s, false failures {d['false_failures']}")
    print("| variant | type | checks | false failures | errors | row err p50 (u) | p99 | max | element | pooled |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for r in d["by_variant"]:
        if r["checks"] == 0 and not r["errors"]:
            continue
        f = lambda x: "—" if x is None else f"{x:.3f}"
        print(f"| {r['variant']} | {r['dtype']} | {r['checks']} | {r['false_failures']} | {len(r['errors'])} | "
              f"{f(r['row_units_p50'])} | {f(r['row_units_p99'])} | {f(r['row_units_max'])} | "
              f"{f(r['worst_element_ratio'])} | {f(r['pooled_max_ratio'])} |")
    for r in d["by_variant"]:
        for x in r["failures"][:3]:
            print(f"FAIL {r['variant']} {r['dtype']}: {x['what']}")
        for e in r["errors"][:2]:
            print(f"error {r['variant']} {r['dtype']}: {e}")


if __name__ == "__main__":
    main(sys.argv[1])
