#!/usr/bin/env python3
"""The verdicts of `attnscope ab --races N --json` files (bench/campaigns/resolution.toml): per file,
how many races called B slower, faster, the same or nothing, how long they took, and the resolution
they stated; and the cycles a planted delay needs for a given slowdown (`delays` mode).

  python3 scripts/races_table.py FILE.json...
  python3 scripts/races_table.py delays CYCLES CALIBRATION.json PREFIX   (prints PREFIX_05=… PREFIX_1=… PREFIX_2=…)
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


def delays(cycles, path, prefix):
    ab = json.load(open(path))["ab"]
    effect = 1 / ab["speedup"] - 1  # B slower by this share
    if not effect > 0:
        sys.exit(f"{path}: the planted delay made B no slower ({ab['speedup']})")
    per = cycles / effect
    print(f"# {cycles} cycles made B {effect * 100:.2f}% slower [{ab['ci_low']:.4f}, {ab['ci_high']:.4f}]",
          file=sys.stderr)
    for tag, pct in (("05", 0.005), ("1", 0.01), ("2", 0.02)):
        print(f"{prefix}_{tag}={max(1, round(per * pct))}")


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "delays":
        delays(int(sys.argv[2]), sys.argv[3], sys.argv[4])
    elif len(sys.argv) >= 2 and sys.argv[1] != "delays":
        table(sys.argv[1:])
    else:
        sys.exit(__doc__)
