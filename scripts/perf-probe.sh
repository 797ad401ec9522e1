#!/usr/bin/env bash
# Where the time of the mma path goes, for docs/perf-log.md (issue 9). One
# call on the GPU machine; logs under $OUT/probe, a short table last.
#   scaling: the kernel on shapes with the same grid (128 CTAs of BLOCK_M=64)
#            and S from 128 to 2048: the intercept is the per-launch cost, the
#            slope the cost per K/V tile.
#   ncu:     stall reasons, L2 and SM throughput of the tuned variant, and the
#            launch configuration and L2 traffic of SDPA's cuDNN kernel.
#   exp:     `bench --kernels DIR` for each experimental copy in exp-kernels/.
#   tiles:   extra tiles for the mma path ($TILES), timed beside $VARIANTS.
#   race:    the bundled kernel against every exp-kernels/ copy in one bench
#            call per shape, each copy's selftest first (see below).
# Usage: bash scripts/perf-probe.sh [scaling] [ncu] [ncusdpa] [exp] [tiles] [race]   (default: all but race)
set -u
WANT=" ${*:-scaling ncu ncusdpa exp tiles} "
BIN=${BIN:-.carry/attnscope}
OUT=${OUT:-/tmp/attnscope-out}/probe
mkdir -p "$OUT"
export PATH="/usr/local/cuda/bin:$PATH"
T0=$(date +%s)
say() { echo "[$(( $(date +%s) - T0 ))s] $*"; }
VARIANTS=${VARIANTS:-mma+async@64x128s2w4,mma+async@64x64s2w8k2,mma+async}
# The shape `ncu` profiles (PROBE_CAUSAL=--causal for a causal one).
PROBE_SHAPE=${PROBE_SHAPE:-2,8,512,64}
PROBE_CAUSAL=${PROBE_CAUSAL:-}

p50() { python3 -c "import json,sys; d=json.load(sys.stdin); print(' '.join(f\"{r['variant']}={r.get('p50_us', float('nan')):.2f}\" + ('' if r.get('correct') else '(WRONG)') for r in d['results']))"; }

if [[ $WANT == *" scaling "* ]]; then
  say "scaling: 128 CTAs of 64 rows, S = 128 … 2048"
  for shape in 8,8,128,64 4,8,256,64 2,8,512,64 1,8,1024,64 1,4,2048,64; do
    echo "  S=${shape#*,*,}  $("$BIN" bench --shape $shape --variants "$VARIANTS" --max-seconds 1 --telemetry-hz 0 --json 2>/dev/null | p50)"
  done
fi

NCU_METRICS="gpu__time_duration.sum,sm__cycles_elapsed.avg,smsp__cycles_active.avg,smsp__inst_executed.sum,\
lts__t_bytes.sum,lts__throughput.avg.pct_of_peak_sustained_elapsed,l1tex__throughput.avg.pct_of_peak_sustained_elapsed,\
sm__throughput.avg.pct_of_peak_sustained_elapsed,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed,\
dram__bytes_read.sum,launch__grid_size,launch__block_size,launch__registers_per_thread,\
launch__shared_mem_per_block_dynamic,launch__shared_mem_per_block_static,launch__cluster_dim_x,\
sm__warps_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,\
sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active,sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active,\
sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active,\
regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio"

ncu_table() {  # csv file → "metric value" lines, stalls sorted, small ones dropped
  python3 - "$1" "$NCU_METRICS" <<'PY'
import csv, sys
rows = [r for r in csv.reader(open(sys.argv[1])) if r]
i = next(k for k, r in enumerate(rows) if "ID" in r)
names, vals = rows[i], rows[i + 2]
d = dict(zip(names, vals))
WANT = set(sys.argv[2].split(","))
def f(x):
    try: return float(x.replace(",", ""))
    except Exception: return None
print("   ", d.get("Kernel Name", "?")[:90])
stalls = []
for n, v in d.items():
    if "issue_stalled" in n and n.endswith(".ratio"):
        if (f(v) or 0) >= 0.05: stalls.append((f(v), n.split("stalled_")[1].split("_per_")[0]))
    elif n in WANT: print(f"    {n:<66} {v}")
print("    stalls per issued instruction: " + ", ".join(f"{k} {v:.2f}" for v, k in sorted(stalls, reverse=True)))
PY
}

if [[ $WANT == *" ncu "* ]] && command -v ncu >/dev/null; then
  for v in ${VARIANTS//,/ }; do
    say "ncu $v, $PROBE_SHAPE $PROBE_CAUSAL (hot L2, clocks left alone)"
    f="$OUT/ncu-$(echo "$v" | tr '+@/:' '____')-${PROBE_SHAPE//,/x}"
    # cuDNN's kernels are named by its engine; the clock probe and L2 scrub are left out.
    ncu --clock-control none --cache-control none --metrics "$NCU_METRICS" -k 'regex:attention_fwd|sdpa|fmha|flash|cudnn' \
        --launch-skip 3 --launch-count 1 \
        --csv --page raw "$BIN" launch --variant "$v" --shape $PROBE_SHAPE $PROBE_CAUSAL --count 5 >"$f.csv" 2>"$f.err" \
      && ncu_table "$f.csv" || tail -3 "$f.err"
  done
fi
if [[ $WANT == *" ncusdpa "* ]] && command -v ncu >/dev/null; then
  cat >"$OUT/sdpa_one.py" <<'PY'
import sys, torch, torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel
be = {"cudnn": SDPBackend.CUDNN_ATTENTION, "flash": SDPBackend.FLASH_ATTENTION}[sys.argv[1]]
q, k, v = (torch.rand(2, 8, 512, 64, device="cuda", dtype=torch.float16) * 2 - 1 for _ in range(3))
torch.cuda.synchronize()
with sdpa_kernel([be]):
    for _ in range(6): F.scaled_dot_product_attention(q, k, v)
torch.cuda.synchronize()
PY
  for be in cudnn flash; do
    say "ncu SDPA $be, B2 H8 S512 D64"
    ncu --clock-control none --cache-control none --metrics "$NCU_METRICS" -k 'regex:sdpa|flash|fmha|attn' \
        --launch-skip 3 --launch-count 1 --csv --page raw python3 "$OUT/sdpa_one.py" $be >"$OUT/ncu-sdpa-$be.csv" 2>"$OUT/ncu-sdpa-$be.err" \
      && ncu_table "$OUT/ncu-sdpa-$be.csv" || tail -3 "$OUT/ncu-sdpa-$be.err"
  done
fi

if [[ $WANT == *" exp "* ]]; then
  for shape in ${EXP_SHAPES:-"2,8,512,64" "2,8,512,64 --causal" "4,16,4096,64"}; do
    echo "  $shape  base: $("$BIN" bench --shape $shape --variants "$VARIANTS" --max-seconds 1 --telemetry-hz 0 --json 2>/dev/null | p50)"
  done
  for dir in exp-kernels/*/; do
    [ -f "$dir/attention.cu" ] || continue
    say "experiment $dir"
    for shape in ${EXP_SHAPES:-"2,8,512,64" "2,8,512,64 --causal" "4,16,4096,64"}; do
      echo "  $shape  $(basename $dir): $("$BIN" bench --kernels "$dir" --shape $shape --variants "$VARIANTS" --max-seconds 1 --telemetry-hz 0 --json 2>"$OUT/exp-$(basename $dir).err" | p50)"
    done
  done
fi
# race: the bundled kernel and every exp-kernels/*/ copy in ONE bench call per
# shape (side by side, ÷ cuDNN), after each copy's selftest on $RACE_CHECK.
#   RACE_VARIANT (one tile name), RACE_NCU (a shape for ncu), RACE_SHAPES ("SHAPE|FLAGS" specs separated
#   by ';', e.g. "2,16,2048,128|;4,16,4096,64|--regime isolated"), RACE_CHECK
#   (comma list).
if [[ $WANT == *" race "* ]]; then
  V=${RACE_VARIANT:-mma+async@128x128s3w8gqpto}
  dirs=(exp-kernels/*/)
  list="cudnn,bundled:$V"
  for dir in "${dirs[@]}"; do
    dir=${dir%/}; [ -f "$dir/attention.cu" ] || continue
    list="$list,$dir:$V"
    say "selftest --kernels $dir --variants ${RACE_CHECK:-$V}"
    timeout -k 5 200 "$BIN" selftest --kernels "$dir" --variants "${RACE_CHECK:-$V}" >"$OUT/race-selftest-$(basename $dir).log" 2>&1
    echo "  rc=$? $(tail -1 "$OUT/race-selftest-$(basename $dir).log")"; grep '^FAIL' "$OUT/race-selftest-$(basename $dir).log" | head -5
  done
  IFS=';' read -ra race_specs <<<"${RACE_SHAPES:-2,16,2048,128|;1,16,16384,128|;4,16,4096,64|}"
  for spec in "${race_specs[@]}"; do
    shape=${spec%|*}; flags=${spec#*|}
    tag="${shape//,/x}$(echo "$flags" | tr -d ' -')"
    say "race $shape $flags: $list"
    timeout -k 5 150 "$BIN" bench --kernels "${dirs[0]%/}" --shape $shape $flags --variants "$list" --warm-seconds 0.5 \
      --max-seconds 1 --telemetry-hz 0 --record "$OUT/race-$tag.jsonl" 2>&1 | tee "$OUT/race-$tag.log" | tail -n +4 | head -8 | sed 's/^/  /'
  done
  # RACE_NCU=SHAPE: Nsight Compute's gpu__time_duration for each (ncu_launch:
  # clocks and caches left alone, median of launches 3-9 of 9).
  if [ -n "${RACE_NCU:-}" ]; then
    source "$(dirname "${BASH_SOURCE[0]}")/ncu-lib.sh"
    for v in ${list//,/ }; do
      k=""; case "$v" in bundled:*) v=${v#bundled:} ;; */*:*) k=${v%%:*}; v=${v#*:} ;; esac
      ncu_launch "$OUT/race-ncu-$(basename "${k:-bundled}")-$(echo "$v" | tr -c 'a-z0-9' _).csv" \
        "$(printf '%-40s' "${k:-bundled} $v")" gpu__time_duration.sum ${k:+--kernels $k} --variant "$v" --shape "$RACE_NCU"
    done
  fi
fi
if [[ $WANT == *" tiles "* && -n "${TILES:-}" ]]; then
  list=$(for t in $TILES; do printf 'mma+async@%s,' "$t"; done)
  for shape in "2,8,512,64" "2,8,512,64 --causal" "4,16,4096,64"; do
    say "tiles, $shape"
    "$BIN" bench --shape $shape --variants "${list}$VARIANTS" --max-seconds 1 --telemetry-hz 0 --json 2>"$OUT/tiles.err" | p50 | tr ' ' '\n' | sed 's/^/  /'
  done
fi
say "done"
