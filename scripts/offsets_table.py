#!/usr/bin/env python3
"""The table of `attnscope ab --offsets ... --json` (bench/campaigns/offsets.toml): per factor, the
spread (σ of the logs, as a share) of the ratio and of each side's median across its levels, beside
the control's, where nothing changed between levels.

  python3 scripts/offsets_table.py OFFSETS.json...
"""
import json
import sys


def main(paths):
    for path in paths:
        try:
            d = json.load(open(path))
        except (OSError, ValueError) as e:
            print(f"{path}: unreadable ({e})")
            continue
        print(f"{d['a']} vs {d['b']} at {d['shape']} on {d['gpu']['name']}, "
              f"{d['seconds_per_level']} s a level")
        rows = {r["factor"]: r for r in d["factors"]}
        control = rows.get("control", {}).get("ratio_sd_rel")
        print("| factor | levels | σ ratio | ÷ control | σ A | σ B | ratios min–max |")
        print("| --- | ---: | ---: | ---: | ---: | ---: | --- |")
        for f, r in rows.items():
            pct = lambda x: "—" if x is None else f"{x * 100:.3f}%"
            rel = "—" if not control else f"{r['ratio_sd_rel'] / control:.1f}×"
            ratios = r["ratios"]
            print(f"| {f} | {r['levels']} | {pct(r['ratio_sd_rel'])} | {rel} | {pct(r['a_sd_rel'])} | "
                  f"{pct(r['b_sd_rel'])} | {min(ratios):.4f}–{max(ratios):.4f} |")
        print()


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
