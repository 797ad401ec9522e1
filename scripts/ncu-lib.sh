# Nsight Compute helpers shared by the campaigns (bench/campaigns/*.toml, sourced by
# scripts/campaign.py's shell steps) and scripts/perf-probe.sh; they read $BIN.
# The median gpu__time_duration of an ncu CSV's kernels (the L2 scrub and
# the clock probe left out), one line: ncu_median CSV LABEL
ncu_median() {
  python3 - "$1" "$2" <<'PY'
import csv, sys, statistics
rows = [r for r in csv.reader(l for l in open(sys.argv[1]) if l.startswith('"'))]
hdr = rows[0] if rows else []
by = {}
if "Metric Value" in hdr:
    i, k = hdr.index("Metric Value"), hdr.index("Kernel Name")
    n = hdr.index("Metric Name") if "Metric Name" in hdr else None
    for r in rows[1:]:
        if "l2_scrub" not in r[k] and "clock_probe" not in r[k]:
            by.setdefault(r[n] if n is not None else "gpu__time_duration.sum", []).append(float(r[i].replace(",", "")))
vals = by.pop("gpu__time_duration.sum", [])
med = statistics.median(vals) / 1e3 if vals else float("nan")
# Any other metric in the CSV (a percentage, say) as its median too.
more = "".join(f"  {m.replace('.avg.pct_of_peak_sustained_active', ' %')} {statistics.median(v):.1f}"
               for m, v in sorted(by.items()))
print(f"  ncu {sys.argv[2]}  kernels {len(vals):2}  median {med:.3f} µs{more}")
PY
}
# Nsight Compute's gpu__time_duration (and the medians of METRICS' others) for
# `launch` ARGS, clocks and caches left alone, launches 3–9 of 9; the CSV in
# FILE, one line printed:   ncu_launch FILE LABEL METRICS LAUNCH-ARGS...
ncu_launch() {
  local f=$1 label=$2 metrics=$3; shift 3
  ncu --metrics "$metrics" --clock-control none --cache-control none --launch-skip 2 --csv \
    "$BIN" launch "$@" --count 9 >"$f" 2>&1
  ncu_median "$f" "$label"
}
