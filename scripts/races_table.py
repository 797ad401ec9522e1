#!/usr/bin/env python3
"""The verdicts of `attnscope ab --races N --json` files (bench/campaigns/resolution.toml): per file,
how many races called B slower, faster, the same or nothing, how long they took, and the resolution
they stated; and the cycles a planted delay needs for a given slowdown (`delays` mode).

  python3 scripts/races_table.py FILE.json...
  python3 scripts/races_table.py delays PREFIX CYCLES:AB.json...   (prints PREFIX_05=… PREFIX_1=… PREFIX_2=…)
      each AB.json an `ab --json` race of the plain variant against it with `y<CYCLES>`; the cycles for
      +0.5%, +1% and +2% are read off the measured points by linear interpolation (with (0, 0)).
"""
import json
import sys


def table(paths):
    print("| race | races | slower | faster | same | undecided | median s | median resolution |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for p in paths:
        try:
            d = json.load(open(p))
        except (OSError, ValueError) as e:
            print(f"| {p} | unreadable: {e} | | | | | | |")
            continue
        n = len(d["races"])
        print(f"| {d['a']} vs {d['b']} | {n} | {d['slower']} | {d['faster']} | {d['same']} | {d['undecided']} "
              f"| {d['median_seconds']:.1f} | {d['median_resolution_rel'] * 100:.2f}% |")


def delays(prefix, points):
    curve = [(0, 0.0)]
    for spec in points:
        cycles, path = spec.split(":", 1)
        ab = json.load(open(path))["ab"]
        effect = 1 / ab["speedup"] - 1  # B slower by this share
        print(f"# {cycles} cycles: B {effect * 100:+.3f}% [{ab['ci_low']:.4f}, {ab['ci_high']:.4f}] {ab['verdict']}",
              file=sys.stderr)
        curve.append((int(cycles), effect))
    curve.sort()
    for tag, want in (("05", 0.005), ("1", 0.01), ("2", 0.02)):
        for (c0, e0), (c1, e1) in zip(curve, curve[1:]):
            if e0 <= want <= e1 and e1 > e0:
                break
        else:
            (c0, e0), (c1, e1) = curve[-2], curve[-1]
        c = c0 + (want - e0) * (c1 - c0) / (e1 - e0) if e1 != e0 else c1
        print(f"{prefix}_{tag}={max(1, round(c))}")


if __name__ == "__main__":
    if len(sys.argv) >= 4 and sys.argv[1] == "delays":
        delays(sys.argv[2], sys.argv[3:])
    elif len(sys.argv) >= 2 and sys.argv[1] != "delays":
        table(sys.argv[1:])
    else:
        sys.exit(__doc__)
