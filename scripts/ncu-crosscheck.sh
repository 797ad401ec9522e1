#!/usr/bin/env bash
# Fidelity check: the same kernel at the same shape measured by attnscope's
# CUPTI range profiler and by Nsight Compute, metric by metric, side by side.
# Run on a GPU machine from the repo root:
#   bash scripts/ncu-crosscheck.sh [VARIANT...]     (default: scalar wmma+pv+async)
# Environment: BIN (attnscope binary, default .carry/attnscope or target/release/attnscope),
#   SHAPE (default 2,8,512,64), MODES (default "cold"; "cold warm" adds warm),
#   RANGES (default "auto"; "auto user" adds attnscope's pushed-range mode).
# cold: ncu's default --cache-control all against `attnscope gates --l2 cold`
#       (L2 emptied before each pass); warm: --cache-control none against --l2 hot
#       (not like for like: ncu's memory save/restore between passes still
#       sends the inputs to DRAM, measured 3.19 MB read on an H100).
# Both sides leave the clocks alone (ncu --clock-control none).
# Target: every gate metric within 2% relative or 1 percentage point of ncu.
set -u
BIN=${BIN:-$( [ -x .carry/attnscope ] && echo .carry/attnscope || echo target/release/attnscope )}
SHAPE=${SHAPE:-2,8,512,64}
MODES=${MODES:-cold}
RANGES=${RANGES:-auto}
VARIANTS=("$@"); [ ${#VARIANTS[@]} -eq 0 ] && VARIANTS=(scalar wmma+pv+async)
OUT=${OUT:-/tmp/attnscope-crosscheck}; mkdir -p "$OUT"
export PATH="/usr/local/cuda/bin:$PATH"
command -v ncu >/dev/null || { echo "ncu not found (install Nsight Compute or put it on PATH)"; exit 4; }
# The metric list attnscope collects, read from attnscope itself (catalogue + gates).
METRICS=$("$BIN" gates --variant scalar --shape 1,1,64,64 --max-seconds 0.5 --json 2>/dev/null \
  | python3 -c 'import json,sys; d=json.load(sys.stdin); print(",".join(sorted(d["counters"]["values"])))')
[ -n "$METRICS" ] || { echo "attnscope collected no counters: run '$BIN gates' to see why"; exit 1; }
for v in "${VARIANTS[@]}"; do
  for mode in $MODES; do
    [ "$mode" = cold ] && { cc=all; l2=cold; } || { cc=none; l2=hot; }
    tag="${v//+/_}-$mode"
    ncu --clock-control none --cache-control $cc --metrics "$METRICS" -k attention_fwd \
        --launch-skip 1 --launch-count 1 --csv --page raw --print-units base \
        "$BIN" launch --variant "$v" --shape "$SHAPE" --count 2 >"$OUT/ncu-$tag.csv" 2>"$OUT/ncu-$tag.err" \
      || { echo "ncu failed for $v ($mode): $(tail -3 "$OUT/ncu-$tag.err")"; continue; }
    for range in $RANGES; do
      "$BIN" gates --variant "$v" --shape "$SHAPE" --l2 $l2 --range "$range" --max-seconds 0.5 --json \
        >"$OUT/attn-$tag-$range.json" 2>"$OUT/attn-$tag-$range.err"
      python3 - "$OUT/ncu-$tag.csv" "$OUT/attn-$tag-$range.json" "$v $mode (ncu --cache-control $cc; attnscope --l2 $l2 --range $range)" <<'PY'
import csv, json, sys, re
ncu_csv, attn_json, title = sys.argv[1:4]
rows = [r for r in csv.reader(open(ncu_csv)) if r]
head = next(i for i, r in enumerate(rows) if "Kernel Name" in r or "ID" in r[:1])
names, values = rows[head], rows[head + 2]
def num(s):
    s = s.replace(",", "").strip()
    try: return float(s)
    except ValueError: return None
ncu = {n: num(v) for n, v in zip(names, values) if "__" in n}
d = json.load(open(attn_json))
if not d.get("counters"):
    print(f"{title}: attnscope collected nothing: {d.get('counter_error')}"); sys.exit(0)
ours = d["counters"]["values"]
def close(a, b, pct):
    if a is None or b is None: return False
    if a == b: return True
    rel = abs(a - b) / max(abs(b), 1e-30)
    return rel <= 0.02 or (pct and abs(a - b) <= 1.0)
print(f"\n== {title}, {d['shape']}, {d['counters']['passes']} passes, {d['counters']['collection_ms']:.0f} ms")
print(f"{'metric':<64} {'attnscope':>14} {'ncu':>14} {'Δ rel':>8}  ok")
bad = 0
for name in sorted(ours):
    a, b = ours[name], ncu.get(name)
    pct = name.endswith("pct_of_peak_sustained_active") or name.endswith("pct_of_peak_sustained_elapsed")
    ok = close(a, b, pct); bad += not ok
    rel = "" if b in (None, 0) else f"{(a - b) / b * 100:+.2f}%"
    print(f"{name:<64} {a:>14.4f} {b if b is not None else float('nan'):>14.4f} {rel:>8}  {'ok' if ok else 'OFF'}")
# Gate values from ncu's numbers with the same formulas (assets/gates.toml).
import tomllib
gates = tomllib.load(open("assets/gates.toml", "rb"))["gate"]
print(f"{'gate':<24} {'attnscope':>12} {'ncu':>12}  ok")
for gr in d["gates"]:
    spec = next((x for x in gates if x["id"] == gr["id"]), None)
    if not spec or all(n.startswith("attnscope:") for n in spec["value"]): continue
    if str(gr.get("reason", "")).startswith("not applicable"): continue  # e.g. tensor pipe on scalar
    try:
        num_ = sum(ncu[n] for n in spec["value"]); den = sum(ncu[n] for n in spec.get("per", []))
        nv = spec.get("scale", 1.0) * (num_ / den if spec.get("per") else num_)
    except (KeyError, TypeError, ZeroDivisionError): nv = None
    av = gr.get("value")
    ok = close(av, nv, spec.get("unit") == "%") or (av is not None and nv is not None and spec.get("unit") == "%" and abs(av - nv) <= 1.0)
    bad += not ok
    fmt = lambda x: "—" if x is None else f"{x:.4g}"
    print(f"{gr['name']:<24} {fmt(av):>12} {fmt(nv):>12}  {'ok' if ok else 'OFF'}")
print(f"-> {'all within 2% / 1 pp' if bad == 0 else f'{bad} outside 2% / 1 pp'}")
PY
    done
  done
done
