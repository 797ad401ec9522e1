#!/usr/bin/env bash
# One call on the GPU machine, printing each result as it lands (a killed call
# still shows what finished). Full logs in $OUT/logs.tgz, sessions in $OUT.
#   doctor · live mode in a 120x40 pseudo-terminal (x starts the A/B race,
#   SIGTERM ends it) · selftest · compute-sanitizer memcheck + racecheck for
#   every variant (parallel) · bench S=512 with CUPTI and with CUDA events ·
#   telemetry on/off · bench causal and S=2048 · ab scalar vs full, A/A.
#   tune: attnscope tune (mma path) on the three shapes of issue 9.
#   sdpa: bench/sdpa_compare.py (PyTorch SDPA backends vs attnscope bench).
#   fault: live with the test-only fault variant and a worker crash (recorded).
#   kernels: live --kernels DIR with the file broken and fixed while running.
#   busy: bench while a PyTorch loop holds the GPU (the shared-GPU warning).
#   soak: live for SOAK_S s (default 240): RSS and events over time.
#   counters: `gates` for every variant, an unknown metric, the ncu crosscheck.
#   device: --device by ordinal, CUDA_VISIBLE_DEVICES and UUID prefix; CUDA's
#   and NVML's bus ids side by side; a recorded bench's header (issue 22).
#   tour: a scripted live session (every toggle combination, a bookmark, the
#   A/B race) recorded to $OUT/tour.jsonl, the session shipped in sessions/.
# Usage (repo root, binary carried in .carry/):
#   bash scripts/device-check.sh [all | SECTION...]   sections: live selftest
#   sanitize bench cold telemetry ab fault kernels busy soak counters tune sdpa tour
#   clocks oracle calibrate regimes cudnn byok byoktour device remote remotetour remotesoak
#   remotekernels twogpu round2 round2counters fidelity round2p round2o round2c round2f round2r round2w round2a round2v round2final round2k round2x round2e round2q round2qr round2m round2m1 round2b round2d round2i round2irace round2sk round2pm round2efc round2ef round2ef64 nvmlenergy s512tiles tune2 tour2
#   (all = every section but the tours and soak)
set -u
SECTIONS=" ${*:-all} "
want() { [[ "$SECTIONS" == *" all "* && "$1" != tour && "$1" != tour2 && "$1" != byoktour && "$1" != soak && "$1" != remotetour && "$1" != remotesoak ]] || [[ "$SECTIONS" == *" $1 "* ]]; }
BIN=${BIN:-.carry/attnscope}
OUT=${OUT:-/tmp/attnscope-out}
LOGS=$(mktemp -d)
mkdir -p "$OUT"
export PATH="/usr/local/cuda/bin:$PATH"
T0=$(date +%s)
say() { echo "[$(( $(date +%s) - T0 ))s] $*"; }
# One compute-sanitizer run of `bench` (two launches), one line printed:
#   sanitize_run TOOL VARIANT SHAPE [bench flags...]
sanitize_run() {
  local tool=$1 v=$2 shape=$3; shift 3
  # The flags in the name too: runs of one variant with other --kernels differ.
  local f="$LOGS/san-$tool-$v-$shape$(echo "$*" | tr -c 'a-zA-Z0-9,\n' _ | tr -d '\n').log"
  timeout -k 5 240 compute-sanitizer --tool "$tool" --error-exitcode 9 "$BIN" bench --shape "$shape" "$@" \
    --variants "$v" --launches 2 --timer events --telemetry-hz 0 >"$f" 2>&1
  echo "  $tool $v $shape${*:+ $*} rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$f" | tail -1)"
}
# memcheck, racecheck and synccheck of one variant at one shape, in parallel:
#   sanitize_three VARIANT SHAPE [bench flags...]
sanitize_three() {
  local tool
  for tool in memcheck racecheck synccheck; do sanitize_run "$tool" "$@" & done
  wait
}
# A file-name tag for a shape and its flags: 4x16x4096x64causal.
spec_tag() { echo "${1//,/x}$(echo "$2" | tr -d ' -')"; }
# The device returns a few files per call: a section's sessions travel as
# one archive, $OUT/PREFIX-sessions.tgz.
pack_sessions() { (cd "$OUT" && tar czf "$1-sessions.tgz" "$1"-*.jsonl && rm -f "$1"-*.jsonl); }
# One bench call of issue 21's sections, 0.5 s warm, 1 s measured, recorded
# to $OUT/PREFIX-TAG.jsonl and logged, the first LINES rows of its table
# printed:   bench_r2 PREFIX TAG LINES BENCH-ARGS...
bench_r2() {
  local prefix=$1 tag=$2 lines=$3; shift 3
  timeout -k 5 150 "$BIN" bench "$@" --warm-seconds 0.5 --max-seconds 1 --telemetry-hz 0 \
    --record "$OUT/$prefix-$tag.jsonl" 2>&1 | tee "$LOGS/$prefix-$tag.log" | tail -n +4 | head -"$lines" | sed 's/^/  /'
}
# One bench_r2 call per "SHAPE|FLAGS" spec of SPECS (';' between specs),
# racing LIST, or LIST64 at D=64:
#   bench_specs PREFIX LINES SPECS LIST LIST64 [bench flags...]
bench_specs() {
  local prefix=$1 lines=$2 list=$4 list64=$5 spec shape flags variants
  local -a specs
  IFS=';' read -ra specs <<<"$3"
  shift 5
  for spec in "${specs[@]}"; do
    shape=${spec%|*}; flags=${spec#*|}
    variants=$list; [ "${shape##*,}" = 64 ] && variants=$list64
    say "bench $shape $flags"
    bench_r2 "$prefix" "$(spec_tag "$shape" "$flags")" "$lines" "$@" --shape $shape $flags --variants "$variants"
  done
}
# ncu_launch for each of VARIANTS (space-separated), the CSVs in
# $LOGS/PREFIX-VARIANT.csv:   ncu_variants PREFIX METRICS "VARIANTS" [launch flags...]
ncu_variants() {
  local prefix=$1 metrics=$2 variants=$3 v; shift 3
  for v in $variants; do
    ncu_launch "$LOGS/$prefix-$(echo "$v" | tr -c 'a-z0-9' _).csv" "$(printf '%-32s' "$v")" "$metrics" "$@" --variant "$v"
  done
}
# One line for the same inputs (seed 7) through three variants, A,B,C: their
# max and relative L2 errors to every digit, whether B's equal A's (step 39's
# e: the same P, bit for bit) and whether C's do (a 64-key tile, another P,
# showing the comparison can differ):
#   same_errors LABEL SHAPE FLAGS INPUTS A,B,C [bench flags...]
same_errors() {
  local label=$1 shape=$2 flags=$3 inputs=$4 variants=$5; shift 5
  "$BIN" bench "$@" --shape "$shape" $flags --inputs "$inputs" --seed 7 --launches 2 --telemetry-hz 0 --json \
    --variants "$variants" 2>>"$LOGS/same-errors.err" | python3 -c 'import json,sys
e=["%r/%r" % (x.get("max_abs_err"), x.get("rel_l2_err")) for x in json.load(sys.stdin)["results"]]
print("  %-40s %-9s %s" % (sys.argv[1], sys.argv[2], " | ".join(e)), "e: same" if e[0] == e[1] else "e: DIFFER",
      "64-key: same" if e[0] == e[2] else "64-key: differ")' "$label" "$inputs"
}
# The full selftest into $LOGS/selftest.log, its exit code, failures and tally:
#   selftest_run [TIME_LIMIT_SECONDS [selftest flags...]]   ("" for no limit)
selftest_run() {
  local limit=${1:-}; shift $(( $# > 0 ? 1 : 0 ))
  ${limit:+timeout -k 5 "$limit"} "$BIN" selftest "$@" >"$LOGS/selftest.log" 2>&1; echo "  rc=$?"
  grep '^FAIL' "$LOGS/selftest.log" | head -20; tail -1 "$LOGS/selftest.log" | sed 's/^/  /'
}
# selftest --mutations into $LOGS/mutations.txt, its exit code, then the lines
# matching PATTERN:   mutations_run LIMIT_SECONDS PATTERN [selftest flags...]
mutations_run() {
  local limit=$1 pattern=$2; shift 2
  timeout -k 5 "$limit" "$BIN" selftest --mutations "$@" >"$LOGS/mutations.txt" 2>&1; echo "  rc=$?"
  grep -E "$pattern" "$LOGS/mutations.txt" | sed 's/^/  /'
}
# ncu_median CSV LABEL and ncu_launch FILE LABEL METRICS LAUNCH-ARGS...
source "$(dirname "${BASH_SOURCE[0]}")/ncu-lib.sh"
trap 'tar czf "$OUT/logs.tgz" -C "$LOGS" . 2>/dev/null' EXIT
CUDNN_DIR=$(python3 -c 'import nvidia.cudnn, os; print(os.path.join(list(nvidia.cudnn.__path__)[0], "lib"))' 2>/dev/null)
if [ -n "$CUDNN_DIR" ]; then
  # cudarc asks the loader for the bare libcudnn.so first: point it at
  # PyTorch's copy, so attnscope's cudnn and torch's run the same library.
  mkdir -p /tmp/cudnn-link && ln -sf "$CUDNN_DIR/libcudnn.so.9" /tmp/cudnn-link/libcudnn.so
  export LD_LIBRARY_PATH="/tmp/cudnn-link:$CUDNN_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  echo "cuDNN for attnscope: $CUDNN_DIR/libcudnn.so.9 (PyTorch's)"
fi

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu --format=csv,noheader
say "doctor"; "$BIN" doctor | sed 's/^/  /'

# The app must be the pty's foreground process: no timeout(1) in between.
if want live && command -v script >/dev/null; then
  say "live (pty 120x40, g at 5 s and 7 s, x at 9 s, SIGTERM at 22 s)"
  ( sleep 5; printf 'g'; sleep 2; printf 'g'; sleep 2; printf 'x'; sleep 40 ) | TERM=xterm-256color script -qfec \
      "stty cols 120 rows 40; exec $BIN live --record $OUT/live.jsonl --ab-seconds 8" /dev/null >"$LOGS/live-tty.log" 2>&1 &
  sleep 22
  pkill -TERM -x attnscope; sleep 3
  pkill -KILL -x attnscope && say "  live had to be SIGKILLed (did not exit on SIGTERM)"
  pkill -f 'sleep 40'; wait 2>/dev/null
  say "  terminal restored (alternate screen left): $(grep -c $'\e\[?1049l' "$LOGS/live-tty.log")"
  "$BIN" replay "$OUT/live.jsonl" --summary >"$LOGS/live-summary.log" 2>&1
  written=$(grep -ao 'closed: [0-9]* events written' "$LOGS/live-tty.log" | grep -o '[0-9]*' | tail -1)
  replayed=$("$BIN" replay "$OUT/live.jsonl" --summary --json --strict | python3 -c 'import json,sys; print(json.load(sys.stdin)["events"])')
  say "  after SIGTERM: ${written:-?} events written, ${replayed:-?} replayed with --strict"

  sed 's/^/  /' "$LOGS/live-summary.log" | grep -vE '^\s+(l1tex|sm__|smsp|dram)' | head -40
  grep -o '"type":"counters"[^{]*\|"collection_ms":[0-9.]*\|"setup_ms":[0-9.]*' "$OUT/live.jsonl" | tr '\n' ' '; echo
fi

if want selftest; then
say "selftest"; selftest_run
fi

if want sanitize; then
say "sanitizers (parallel)"
# The mma path also on a causal shape with partial tiles (split groups left idle).
for v in scalar wmma pv wmma+pv async wmma+async pv+async wmma+pv+async mma mma+async \
         mma+async@64x64s2w8k2 mma+async@32x64s2w8k4 mma+async@128x64s2w4 mma+async@64x64s3w4 mma+async@64x32s3w8k2 \
         mma@64x64s2w4g mma+async@64x64s2w4g mma+async@64x64s3w8k2g mma+async@64x128s2w8k2g mma+async@64x64s2w16k4g; do
  for tool in memcheck racecheck; do
    for shape in 2,8,512,64 1,3,333,64; do
      [[ $shape == 1,3,333,64 && $v != mma* ]] && continue
      sanitize_run "$tool" "$v" $shape $([[ $shape == 1,3,333,64 ]] && echo --causal) &
    done
  done
done | sort
wait
fi

if want bench; then
say "bench S=512, CUPTI timer (recorded)"; "$BIN" bench --shape 2,8,512,64 --max-seconds 3 --record "$OUT/bench-s512.jsonl"
say "bench S=512, CUDA-event timer"; "$BIN" bench --shape 2,8,512,64 --max-seconds 3 --timer events --telemetry-hz 0
fi

if want telemetry; then
say "telemetry cost: full variant, sampler off/on/off/on"
for hz in 0 10 0 10; do
  "$BIN" bench --variants wmma+pv+async --launches 200000 --telemetry-hz $hz --json 2>"$LOGS/tel-$hz.err" \
    | python3 -c "import json,sys; r=json.load(sys.stdin)['results'][0]; print(f'  hz=$hz p50 {r[\"p50_us\"]:.3f} µs  n {r[\"samples\"]}')"
  grep telemetry "$LOGS/tel-$hz.err" | sed 's/^/    /'
done
fi

if want bench; then
say "bench S=512 causal"; "$BIN" bench --shape 2,8,512,64 --causal --max-seconds 3
say "bench S=2048"; "$BIN" bench --shape 2,8,2048,64 --max-seconds 3
fi

if want cold; then
say "bench S=512, cold L2 (flushed between launches) vs hot"
"$BIN" bench --variants scalar,wmma+pv+async --cold-l2 --max-seconds 3
"$BIN" bench --variants scalar,wmma+pv+async --max-seconds 3
fi

if want ab; then
say "ab scalar vs wmma+pv+async (recorded)"; "$BIN" ab --a scalar --b wmma+pv+async --record "$OUT/ab.jsonl"; echo "  rc=$?"
say "A/A wmma+pv+async vs itself"; "$BIN" ab --a wmma+pv+async --b wmma+pv+async; echo "  rc=$?"
say "replay --summary of the A/B session (tail)"; "$BIN" replay "$OUT/ab.jsonl" --summary | tail -6
fi

# Fault injection: live on scalar, F turns on the test-only out-of-bounds store
# (an illegal address kills the worker process, the dashboard restarts it on
# scalar), then SIGKILL to the worker process (a crash or an OOM kill: an
# external SIGSEGV would be swallowed by Rust's stack-overflow handler), then
# SIGTERM to the dashboard alone.
if want fault && command -v script >/dev/null; then
  say "fault injection (live, pty 120x40: F at 6 s, SIGKILL to the worker at 14 s, SIGTERM at 22 s)"
  ( sleep 6; printf 'F'; sleep 40 ) | ATTNSCOPE_TEST_FAULTS=1 TERM=xterm-256color script -qfec \
      "stty cols 120 rows 40; exec $BIN live --variant scalar --record $OUT/fault.jsonl" /dev/null >"$LOGS/fault-tty.log" 2>&1 &
  # The worker runs as the binary's absolute path: match "attnscope worker".
  sleep 14; say "  SIGKILL to $(pgrep -f 'attnscope worker' | tr '\n' ' ')"; pkill -KILL -f "attnscope worker"; sleep 8
  say "  processes before SIGTERM: $(pgrep -fa 'attnscope (live|worker)' | grep -v script | cut -c1-70 | tr '\n' ';')"
  pkill -TERM -f "^$BIN live"; sleep 3
  left=$(pgrep -fa 'attnscope (live|worker)' | grep -v script | cut -c1-70 | tr '\n' ';')
  [ -n "$left" ] && { say "  still running 3 s after SIGTERM: $left"; pkill -KILL -x attnscope; }
  pkill -f 'sleep 40'; wait 2>/dev/null
  say "  terminal restored: $(grep -c $'\e\[?1049l' "$LOGS/fault-tty.log")"
  "$BIN" replay "$OUT/fault.jsonl" --summary --strict 2>&1 | head -12
  grep -o '"source":"[a-z]*","message":"[^"]*"' "$OUT/fault.jsonl" | cut -c1-400
fi

# --kernels: a copy of kernels/ edited while live: a syntax error at 6 s
# (BUILD FAILED, the last good build keeps running), the original back at 11 s.
if want kernels && command -v script >/dev/null; then
  say "kernels (live --kernels DIR: broken at 6 s, fixed at 11 s, SIGTERM at 16 s)"
  K=$(mktemp -d); cp kernels/attention.cu "$K/"
  ( sleep 40 ) | TERM=xterm-256color script -qfec \
      "stty cols 120 rows 40; exec $BIN live --variant wmma --kernels $K --record $OUT/kernels.jsonl" /dev/null >"$LOGS/kernels-tty.log" 2>&1 &
  sleep 6; echo 'this is not C++;' >>"$K/attention.cu"
  sleep 5; cp kernels/attention.cu "$K/attention.cu"; echo '// saved again' >>"$K/attention.cu"
  sleep 5; pkill -TERM -f "^$BIN live"; sleep 3; pkill -f 'sleep 40'; wait 2>/dev/null
  python3 - "$OUT/kernels.jsonl" <<'PY'
import json, sys
for l in open(sys.argv[1]):
    d = json.loads(l); e = d["event"]; t = d["t_us"] / 1e6
    if e["type"] == "build_finished": print(f"  {t:6.2f}s built, source {e.get('source_hash')}, cached={e['cached']}")
    elif e["type"] == "build_failed": print(f"  {t:6.2f}s BUILD FAILED: {next((x for x in e['log'].splitlines() if 'error' in x), '?')}")
    elif e["type"] == "measurement_done": print(f"  {t:6.2f}s measured: median {e.get('median_ns', 0)/1e3:.2f} µs, {e.get('samples')} samples")
    elif e["type"] == "error": print(f"  {t:6.2f}s error: {e['message'][:150]}")
PY
fi

# A GPU already busy: a PyTorch matmul loop in the background during a bench.
if want busy; then
  say "busy GPU (PyTorch matmul loop in the background)"
  python3 -c "import torch,time; a=torch.randn(8192,8192,device='cuda',dtype=torch.half); t=time.time()
while time.time()-t<30: a@a" & BUSY=$!
  sleep 12
  say "  nvidia-smi sees: $(nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv,noheader | tr '\n' ';') util $(nvidia-smi --query-gpu=utilization.gpu --format=csv,noheader)"
  "$BIN" bench --variants wmma+pv+async --max-seconds 2 2>&1 | grep -E "warning|wmma" | cut -c1-300
  kill $BUSY 2>/dev/null; wait $BUSY 2>/dev/null
fi

# Load: live for SOAK_S seconds (default 240), recorded, telemetry at its
# 100 Hz maximum, the worker kept busy (w toggles a rebuild, check and
# measurement every 4 s, x races A/B in between); RSS every 30 s.
if want soak && command -v script >/dev/null; then
  S=${SOAK_S:-240}
  say "soak: live for $S s (pty 120x40, recorded)"
  ( sleep 3; end=$((SECONDS+S)); while [ $SECONDS -lt $end ]; do printf w; sleep 4; printf x; sleep 4; done; sleep 60 ) \
    | TERM=xterm-256color script -qfec \
      "stty cols 120 rows 40; exec $BIN live --telemetry-hz 100 --ab-seconds 3 --record $OUT/soak.jsonl" /dev/null >"$LOGS/soak-tty.log" 2>&1 &
  for i in $(seq 0 30 $S); do
    sleep $([ $i -eq 0 ] && echo 3 || echo 30)
    ui=$(pgrep -f "^$BIN live"); wk=$(pgrep -f "attnscope worker" | head -1)
    say "  t=${i}s RSS dashboard $(awk '/VmRSS/{print $2}' /proc/$ui/status 2>/dev/null) kB, worker $(awk '/VmRSS/{print $2}' /proc/$wk/status 2>/dev/null) kB, file $(stat -c %s $OUT/soak.jsonl 2>/dev/null) B"
  done
  pkill -TERM -f "^$BIN live"; sleep 3; pkill -f "sleep 60"; wait 2>/dev/null
  written=$(grep -ao 'closed: [0-9]* events written' "$LOGS/soak-tty.log" | grep -o '[0-9]*' | tail -1)
  "$BIN" replay "$OUT/soak.jsonl" --summary --json --strict | python3 -c "
import json,sys; d=json.load(sys.stdin); print(f'  {d[\"events\"]} events replayed ({\"$written\"} written) over {d[\"duration_s\"] if \"duration_s\" in d else \"?\"} s')"
  rm -f "$OUT/soak.jsonl"
fi

if want counters; then
say "gates, every variant (counters with L2 emptied before each pass)"
for v in scalar wmma pv wmma+pv async wmma+async pv+async wmma+pv+async mma+async mma+async@64x64s2w8k2 mma+async@128x64s2w4 \
         mma+async@64x128s2w8k2g mma+async@64x128s2w4g; do
  "$BIN" gates --variant "$v" --max-seconds 1 --json >"$LOGS/gates-$v.json" 2>"$LOGS/gates-$v.err"; rc=$?
  python3 - "$LOGS/gates-$v.json" "$v" "$rc" <<'PY'
import json, sys
path, v, rc = sys.argv[1:4]
try: d = json.load(open(path))
except Exception as e: print(f"  {v:<15} rc={rc} no JSON ({e})"); sys.exit()
c = d.get("counters") or {}
marks = " ".join(f"{g['id']}={g['status'][0].upper() if g['status'] != 'not_applicable' else '-'}" for g in d["gates"])
print(f"  {v:<15} rc={rc} passes {c.get('passes')} {c.get('collection_ms', 0):.0f} ms ({c.get('setup_ms', 0):.0f} setup)  {marks}  {d.get('counter_error') or ''}")
PY
done
for v in mma+async@64x64s2w8k2 mma+async@64x128s2w8k2g; do
  say "gates table, $v"; "$BIN" gates --variant $v --max-seconds 1; echo "  rc=$?"
done
say "gates table, mma+async@64x128s2w4g at B4 H16 S4096"
"$BIN" gates --variant mma+async@64x128s2w4g --shape 4,16,4096,64 --max-seconds 1; echo "  rc=$?"
say "an unknown metric in --metrics: refused, the rest collected"
printf '[[metric]]\nname = "sm__no_such_metric.sum"\nunit = ""\ndisplay = "bogus"\n' >"$LOGS/bogus.toml"
"$BIN" gates --variant wmma --metrics "$LOGS/bogus.toml" --max-seconds 0.5 2>&1 | grep -E "refused|Tensor|passes" | head -5
say "ncu crosscheck"
OUT="$LOGS/xc" RANGES="${RANGES:-auto}" bash scripts/ncu-crosscheck.sh scalar wmma+pv+async mma+async@64x64s2w8k2 mma+async@64x128s2w8k2g 2>&1 | tee "$LOGS/crosscheck.log"
fi

# Tune the mma path on the three shapes of issue 9 (the choice is cached for sdpa below).
if want tune; then
for shape in "2,8,512,64" "2,8,512,64 --causal" "4,16,4096,64"; do
  say "tune mma+async, $shape"
  "$BIN" tune --shape $shape --max-seconds 1 2>"$LOGS/tune-${shape// /}.err" | tee "$LOGS/tune-${shape// /}.log" | head -24
done
fi

if want sdpa; then
say "attnscope against PyTorch SDPA (bench/sdpa_compare.py)"
python3 bench/sdpa_compare.py --bin "$BIN" --json "$OUT/sdpa.json" 2>&1 | tee "$LOGS/sdpa.log" | tail -16
fi

# A scripted tour in live mode: scalar, then a Gray-code walk over the three
# toggles (w p w c w p w) so every combination is built, checked and timed,
# counters (g) for every variant, a bookmark, then the A/B race (scalar vs
# wmma+pv+async).
if want tour && command -v script >/dev/null; then
  say "tour (live, pty 120x40)"
  # scalar; the WMMA toggles to wmma+pv+async; M and t eighteen times to
  # 64x128s2w8k2g (the tile tune picks at this shape), g; R: isolated for a
  # while, R back; I: checks on normal:1, again I for normal:4, I for rising;
  # d: cuDNN, g, a (slot A); d back to the tile, b (slot B); d and d again
  # (cuDNN from its cached plan, and back); a bookmark, and the race cuDNN
  # vs the wgmma tile, interleaved.
  ( sleep 4; printf g; sleep 2; for k in w p c; do printf "$k"; sleep 2; done; printf g; sleep 2
    printf M; sleep 1; for i in $(seq 18); do printf t; sleep 0.4; done; sleep 2; printf g; sleep 2
    printf R; sleep 5; printf R; sleep 2; printf I; sleep 1; printf I; sleep 1; printf I; sleep 2
    printf d; sleep 3; printf g; sleep 2; printf a; sleep 1; printf d; sleep 3; printf b; sleep 1
    printf d; sleep 2; printf d; sleep 2; printf 'm'; sleep 1; printf 'x'; sleep 60 ) \
    | TERM=xterm-256color script -qfec \
      "stty cols 120 rows 40; exec $BIN live --variant scalar --record $OUT/tour.jsonl --ab-seconds 8" /dev/null >"$LOGS/tour-tty.log" 2>&1 &
  sleep 74
  pkill -TERM -x attnscope; sleep 3
  pkill -KILL -x attnscope && say "  tour had to be SIGKILLed"
  pkill -f 'sleep 60'; wait 2>/dev/null
  say "  terminal restored: $(grep -c $'\e\[?1049l' "$LOGS/tour-tty.log")"
  "$BIN" replay "$OUT/tour.jsonl" --summary | grep -vE '^\s+(l1tex|sm__|smsp|dram)' | head -60
fi

if want cudnnnames; then
  say "what each side runs: PyTorch's cuDNN SDPA kernels per call, attnscope's cudnn engine"
  PYTHONUNBUFFERED=1 python3 - <<'PY'
import torch, torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel
from torch.profiler import profile, ProfilerActivity
print("  torch", torch.__version__, "cuDNN", torch.backends.cudnn.version())
for (b, h, s, d) in [(2, 8, 512, 64), (4, 16, 4096, 64), (2, 16, 2048, 128)]:
    q, k, v = (torch.rand(b, h, s, d, device="cuda", dtype=torch.float16) for _ in range(3))
    with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
        for _ in range(5):
            F.scaled_dot_product_attention(q, k, v)
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            F.scaled_dot_product_attention(q, k, v)
            torch.cuda.synchronize()
    ks = [(e.name, e.self_device_time_total) for e in prof.events() if str(e.device_type).endswith("CUDA")]
    print(f"  B{b} H{h} S{s} D{d}: {len(ks)} kernels/call: " + "; ".join(f"{n[:70]} {t:.2f} µs" for n, t in ks))
PY
  for shape in "2,8,512,64" "4,16,4096,64" "2,16,2048,128"; do
    "$BIN" bench --variants cudnn --shape $shape --max-seconds 1 --telemetry-hz 0 --record /tmp/c.jsonl >/dev/null 2>&1
    echo "  attnscope $shape: $(grep -o '"ptxas_log":"[^"]*"' /tmp/c.jsonl | head -1)"
  done
fi

# ---- issue 16/17/18 sections: clocks, oracle, calibrate, regimes, cudnn ----
G=mma+async@64x128s2w8k2g

if want clocks; then
  say "clock probe against NVML (attnscope clocks)"
  "$BIN" clocks >"$OUT/clocks.json" 2>"$LOGS/clocks.err"; echo "  rc=$?"
  python3 - "$OUT/clocks.json" <<'PY'
import json, sys, statistics
d = json.load(open(sys.argv[1]))
print("  globaltimer steps ns:", d["globaltimer_steps_ns"], " expected MHz:", d["expected_mhz"])
by = {}
for p in d["probes"]:
    by.setdefault((p.get("after_batch", False), p["cycles"]), []).append(p)
for (a, c), ps in sorted(by.items()):
    print(f"  {'after a batch' if a else 'idle':<13} {c:>9} cycles: probe {statistics.median(p['probe_mhz'] for p in ps):7.1f} MHz "
          f"(min {min(p['probe_mhz'] for p in ps):.1f}, max {max(p['probe_mhz'] for p in ps):.1f})  host clock {statistics.median(p.get('host_mhz', 0) for p in ps):7.1f} MHz  NVML {statistics.median(p['nvml_mhz_after'] for p in ps)} MHz")
print("  CUPTI step from the probes:", d.get("cupti_step_ns"), " globaltimer vs host:", d.get("globaltimer_vs_host"),
      " calibrated probe now:", d.get("calibrated_probe_mhz_now"), "MHz, NVML now:", d.get("nvml_mhz_now"))
PY
fi

if want quick; then
  say "selftest --quick"
  "$BIN" selftest --quick >"$LOGS/quick.log" 2>&1; echo "  rc=$?"
  grep -E '^FAIL' "$LOGS/quick.log" | head; tail -1 "$LOGS/quick.log" | sed 's/^/  /'
fi

if want oracle; then
  say "selftest --mutations (planted rescale and merge bugs)"
  "$BIN" selftest --mutations >"$OUT/mutations.txt" 2>&1; echo "  rc=$?"; cat "$OUT/mutations.txt" | sed 's/^/  /'
  say "selftest (full: every path, every distribution, odd shapes, B·H > 65535)"
  "$BIN" selftest >"$LOGS/selftest.log" 2>&1; echo "  rc=$?"
  grep -E '^(FAIL|skip)' "$LOGS/selftest.log" | head -20 | sed 's/^/  /'; tail -1 "$LOGS/selftest.log" | sed 's/^/  /'
  grep -E '256,256,17|B256 H256|B256 H257' "$LOGS/selftest.log" | head -6 | sed 's/^/  /'
  cp "$LOGS/selftest.log" "$OUT/selftest.txt"
fi

if want calibrate; then
  for v in scalar $G; do
    say "A/A calibration, $v (20 races)"
    "$BIN" ab --calibrate $v --races 20 --ab-seconds 3 --telemetry-hz 0 >"$LOGS/cal-$v.log" 2>&1; echo "  rc=$?"
    head -1 "$LOGS/cal-$v.log" | cut -c1-200 | sed 's/^/  /'; tail -1 "$LOGS/cal-$v.log" | sed 's/^/  /'
    cat "$LOGS/cal-$v.log" >>"$OUT/calibration.txt"
  done
  say "--expect: scalar vs $G faster (rc 0), same (rc 1)"
  "$BIN" ab --a scalar --b $G --expect faster --ab-seconds 2 --telemetry-hz 0 | tail -2 | sed 's/^/  /'; echo "  rc=${PIPESTATUS[0]}"
  "$BIN" ab --a scalar --b $G --expect same --ab-seconds 2 --telemetry-hz 0 | tail -1 | sed 's/^/  /'; echo "  rc=${PIPESTATUS[0]}"
fi

if want regimes; then
  V="scalar,wmma+pv+async,$G,cudnn"
  for r in back-to-back isolated; do
    say "bench $r: $V"
    "$BIN" bench --variants $V --regime $r --max-seconds 2 --telemetry-hz 0 --json >"$OUT/regime-$r.json" 2>"$LOGS/regime-$r.err"; echo "  rc=$?"
  done
  for v in wmma+pv+async $G cudnn; do
    say "interleaved: scalar vs $v"
    "$BIN" ab --a scalar --b $v --ab-seconds 3 --telemetry-hz 0 --json >"$OUT/interleaved-$v.json" 2>>"$LOGS/interleaved.err"; echo "  rc=$?"
  done
  say "isolation taken apart: $G and cudnn (gap, L2, the scrub's carveout)"
  for cfg in "gap=1000 l2=cold" "gap=1000 l2=hot" "gap=20 l2=cold" "gap=10000 l2=cold" "gap=1000 l2=cold carve=100" "gap=20 l2=hot"; do
    gap=$(echo $cfg | grep -o 'gap=[0-9]*' | cut -d= -f2); l2=$(echo $cfg | grep -o 'l2=[a-z]*' | cut -d= -f2)
    carve=$(echo $cfg | grep -o 'carve=[0-9]*' | cut -d= -f2)
    ATTNSCOPE_ISOLATION_GAP_US=$gap ATTNSCOPE_ISOLATION_L2=$l2 ATTNSCOPE_SCRUB_CARVEOUT=$carve \
      "$BIN" bench --variants $G,cudnn,wmma+pv+async --regime isolated --max-seconds 1.5 --telemetry-hz 0 --json \
      >"$OUT/iso-$gap-$l2-${carve:-x}.json" 2>/dev/null
  done
  say "back-to-back cold L2 (scrub before each, no gap)"
  "$BIN" bench --variants $G,cudnn,wmma+pv+async --cold-l2 --max-seconds 1.5 --telemetry-hz 0 --json >"$OUT/b2b-cold.json" 2>/dev/null
  python3 scripts/regime_table.py "$OUT" | tee "$OUT/regimes.txt"
fi

if want cudnn; then
  say "cuDNN fidelity: attnscope cudnn vs PyTorch's cuDNN SDPA (same run, CUPTI both) and ncu"
  PYTHONUNBUFFERED=1 python3 bench/sdpa_compare.py --bin "$BIN" --variants "cudnn,$G" --json "$OUT/sdpa.json" 2>&1 | tail -30
  for shape in "2,8,512,64" "4,16,4096,64" "2,16,2048,128"; do
    for v in cudnn $G; do
      ncu --metrics gpu__time_duration.sum --clock-control none --csv "$BIN" launch --variant $v --shape $shape --count 5 \
        >"$LOGS/ncu-$v-$shape.csv" 2>&1
      ncu_median "$LOGS/ncu-$v-$shape.csv" "$(printf '%-26s %-14s (alone, cache flushed)' "$v" "$shape")"
    done
  done
  "$BIN" launch --variant cudnn --shape 2,8,512,64 --causal --count 5 >/dev/null 2>&1 && echo "  causal cudnn launch ok"
fi

if want byok; then
  RW=examples/rowwarp
  say "bundled kernel through its manifest: selftest --quick"
  "$BIN" selftest --quick >"$OUT/bundled-quick.txt" 2>&1; echo "  rc=$?"
  grep -E '^FAIL' "$OUT/bundled-quick.txt" | head -5 | sed 's/^/  /'; tail -1 "$OUT/bundled-quick.txt" | sed 's/^/  /'
  say "bench, bundled: scalar, wmma+pv+async, $G, cudnn (back to back)"
  "$BIN" bench --variants scalar,wmma+pv+async,$G,cudnn --max-seconds 1.5 --telemetry-hz 0 2>&1 | tee "$OUT/bundled-bench.txt" | sed 's/^/  /'
  say "rowwarp: selftest (full)"
  "$BIN" selftest --kernels $RW >"$OUT/rowwarp-selftest.txt" 2>&1; echo "  rc=$?"
  grep -E '^(FAIL|skip)' "$OUT/rowwarp-selftest.txt" | head -10 | sed 's/^/  /'; tail -1 "$OUT/rowwarp-selftest.txt" | sed 's/^/  /'
  say "rowwarp: selftest --mutations"
  "$BIN" selftest --kernels $RW --mutations >"$OUT/rowwarp-mutations.txt" 2>&1; echo "  rc=$?"
  sed 's/^/  /' "$OUT/rowwarp-mutations.txt"
  say "rowwarp: bench all, and two tiles"
  "$BIN" bench --kernels $RW --variants plain,smem,exp2,smem+exp2,smem+exp2@4w4k64,smem+exp2@4w8k64 --max-seconds 1 --telemetry-hz 0 2>&1 | tee "$OUT/rowwarp-bench.txt" | sed 's/^/  /'
  say "cross-kernel race, headless: bundled $G vs rowwarp smem+exp2@4w4k64 (interleaved)"
  "$BIN" ab --a $G --b $RW:smem+exp2@4w4k64 --ab-seconds 3 --telemetry-hz 0 --record "$OUT/xrace.jsonl" 2>&1 | tail -4 | sed 's/^/  /'
  say "starter: attnscope new, selftest --quick, bench all"
  rm -rf /tmp/starter; "$BIN" new /tmp/starter | head -3 | sed 's/^/  /'
  "$BIN" selftest --kernels /tmp/starter --quick >"$OUT/starter-selftest.txt" 2>&1; echo "  rc=$?"; tail -1 "$OUT/starter-selftest.txt" | sed 's/^/  /'
  "$BIN" bench --kernels /tmp/starter --variants all --max-seconds 1 --telemetry-hz 0 2>&1 | sed 's/^/  /'
  say "a kernel with the wrong signature is refused before launch"
  rm -rf /tmp/badabi; cp -r /tmp/starter /tmp/badabi
  sed -i 's/half\* __restrict__ O, int S, float scale_log2, int causal)/half* __restrict__ O, int S, float scale_log2)/; s/causal ? row + 1 : S/S/' /tmp/badabi/starter.cu
  "$BIN" bench --kernels /tmp/badabi --variants scalar --max-seconds 0.5 --telemetry-hz 0 2>&1 | tail -2 | sed 's/^/  /'
fi

# The app must be the pty's foreground process: no timeout(1) in between.
if want byoktour && command -v script >/dev/null; then
  say "byok tour (live --kernels examples/rowwarp, pty 120x40)"
  # rowwarp's smem+exp2: h (smem off) and back, e (exp2 off) and back, t
  # three times (2w4k64, 4w4, 4w4k64), g, b (slot B); K to the bundled
  # kernel, M and t eighteen times to 64x128s2w8k2g, a (slot A); K back;
  # a bookmark, and the race bundled vs rowwarp, interleaved.
  ( sleep 4; printf h; sleep 2; printf h; sleep 2; printf e; sleep 2; printf e; sleep 2
    for i in 1 2 3; do printf t; sleep 1.5; done; printf g; sleep 3; printf b; sleep 1
    printf K; sleep 3; printf M; sleep 1; for i in $(seq 18); do printf t; sleep 0.4; done; sleep 2
    printf a; sleep 1; printf K; sleep 3; printf m; sleep 1; printf x; sleep 60 ) \
    | TERM=xterm-256color script -qfec \
      "stty cols 120 rows 40; exec $BIN live --kernels examples/rowwarp --record $OUT/byok.jsonl --ab-seconds 8" /dev/null >"$LOGS/byok-tty.log" 2>&1 &
  sleep 58
  pkill -TERM -x attnscope; sleep 3
  pkill -KILL -x attnscope && say "  tour had to be SIGKILLed"
  pkill -f 'sleep 60'; wait 2>/dev/null
  say "  terminal restored: $(grep -c $'\e\[?1049l' "$LOGS/byok-tty.log")"
  "$BIN" replay "$OUT/byok.jsonl" --summary | grep -vE '^\s+(l1tex|sm__|smsp|dram)' | head -40
fi
say "done"

if want cudnnd128; then
  # The D=128 fidelity question: does attnscope's cuDNN graph run the same
  # kernel as PyTorch's cuDNN SDPA? Both under Nsight Compute (the same
  # referee), hot L2, full kernel names; S=4096 D=64 as the control.
  cat >/tmp/torch_sdpa.py <<'PY'
import sys, torch, torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel
b, h, s, d = (int(x) for x in sys.argv[1].split(","))
# attnscope's timing inputs: uniform in [-1, 1]; "01" for torch.rand's [0, 1).
lo = 0.0 if sys.argv[2:] == ["01"] else -1.0
q, k, v = (torch.rand(b, h, s, d, device="cuda", dtype=torch.float16) * (1 - lo) + lo for _ in range(3))
with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
    for _ in range(5):
        F.scaled_dot_product_attention(q, k, v)
torch.cuda.synchronize()
PY
  for shape in 2,16,2048,128 4,16,4096,64; do
    say "ncu, $shape: attnscope cudnn, then PyTorch cuDNN SDPA (kernel names and gpu__time_duration)"
    ncu --clock-control none --cache-control none --metrics gpu__time_duration.sum --csv \
      "$BIN" launch --variant cudnn --shape $shape --count 5 >"$LOGS/ncu-ours-$shape.csv" 2>&1
    ncu --clock-control none --cache-control none --metrics gpu__time_duration.sum --csv \
      python3 /tmp/torch_sdpa.py $shape >"$LOGS/ncu-torch-$shape.csv" 2>&1
    ncu --clock-control none --cache-control none --metrics gpu__time_duration.sum --csv \
      python3 /tmp/torch_sdpa.py $shape 01 >"$LOGS/ncu-torch01-$shape.csv" 2>&1
    for side in ours torch torch01; do
      python3 - "$LOGS/ncu-$side-$shape.csv" "$side" <<'PY'
import csv, sys, collections
rows = [r for r in csv.reader(l for l in open(sys.argv[1]) if l.startswith('"'))]
if not rows or "Metric Value" not in rows[0]:
    print(f"  {sys.argv[2]}: no ncu rows"); sys.exit()
h = rows[0]; i, k = h.index("Metric Value"), h.index("Kernel Name")
by = collections.defaultdict(list)
for r in rows[1:]:
    if "l2_scrub" in r[k] or "clock_probe" in r[k] or "at::" in r[k]: continue
    by[r[k]].append(float(r[i].replace(",", "")) / 1e3)
for name, v in by.items():
    v.sort(); print(f"  {sys.argv[2]:<5} n={len(v)} median {v[len(v)//2]:8.2f} µs  {name[:160]}")
PY
    done
  done
fi

# ---- issue 22: many GPUs in one host ----
# --device N, CUDA_VISIBLE_DEVICES=N and --device GPU-<prefix> must name the
# same GPU, and NVML (telemetry) the same one as CUDA: each doctor prints
# CUDA's bus id and NVML's. nvidia-smi's index is PCI order; CUDA's ordinal
# follows CUDA_DEVICE_ORDER (fastest first), so on a mixed host they may differ.
if want device; then
  say "device: nvidia-smi's GPUs"
  nvidia-smi --query-gpu=index,pci.bus_id,uuid,name --format=csv | sed 's/^/  /'
  uuid0=$(nvidia-smi --query-gpu=uuid --format=csv,noheader -i 0 | head -1 | tr -d ' ')
  prefix=${uuid0:0:12}   # GPU- and the first 8 hex digits
  ngpu=$(nvidia-smi --query-gpu=index --format=csv,noheader | wc -l)
  doctor_ids() {  # label, then the command; prints the bus-id lines
    echo "  $1:"; shift
    "$@" >"$LOGS/device-doctor.log" 2>&1; echo "    rc=$?"
    grep -E 'bus id|FAIL GPU|no telemetry|CUDA sees|^ +[0-9]+: ' "$LOGS/device-doctor.log" | sed 's/^/    /'
  }
  say "device: doctor three ways (all should name nvidia-smi's GPU 0 on a one-model host)"
  doctor_ids "--device 0" "$BIN" doctor --device 0
  doctor_ids "CUDA_VISIBLE_DEVICES=0" env CUDA_VISIBLE_DEVICES=0 "$BIN" doctor
  doctor_ids "--device $prefix" "$BIN" doctor --device "$prefix"
  if [ "$ngpu" -gt 1 ]; then
    say "device: GPU 1 two ways (NVML must follow: bus ids of GPU 1, not GPU 0)"
    doctor_ids "--device 1" "$BIN" doctor --device 1
    doctor_ids "CUDA_VISIBLE_DEVICES=1" env CUDA_VISIBLE_DEVICES=1 "$BIN" doctor
  fi
  say "device: refusals (exit 4 with the GPUs there are; exit 2 for a malformed one)"
  for d in 99 GPU-0000dead foo; do
    "$BIN" bench --device "$d" --variants scalar --max-seconds 1 >/dev/null 2>"$LOGS/device-bad.err"
    echo "  --device $d: rc=$? $(grep -v '^$' "$LOGS/device-bad.err" | head -1)"
  done
  say "device: bench --device 0 (recorded): the header's uuid and pci_bus_id, the first telemetry sample"
  "$BIN" bench --device 0 --variants scalar --max-seconds 1 --record "$OUT/device0.jsonl" >"$LOGS/device-bench.log" 2>&1
  echo "  rc=$?"; grep -i 'telemetry\|warning' "$LOGS/device-bench.log" | sed 's/^/  /'
  python3 - "$OUT/device0.jsonl" <<'PY'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
g = lines[0]["event"].get("gpu") or {}
print(f"  header: {g.get('name')} uuid {g.get('uuid')} pci_bus_id {g.get('pci_bus_id')}")
t = next((l["event"] for l in lines if l["event"].get("type") == "telemetry"), None)
if t:
    print(f"  first telemetry: SM {t.get('sm_clock_mhz')} MHz, {t.get('power_w')} W, {t.get('temp_c')} C")
else:
    print("  no telemetry sample recorded")
PY
  nvidia-smi --query-gpu=index,pci.bus_id,clocks.sm,power.draw,temperature.gpu --format=csv,noheader | sed 's/^/  nvidia-smi now: /'
fi

if want remote; then
  say "remote: bench through a worker command vs bench here, one run, same variants (interleaved order)"
  V=scalar,wmma+pv+async,mma+async@64x128s2w8k2g,cudnn
  direct() { "$BIN" bench --variants $V --max-seconds 2 --json >"$LOGS/direct-$1.json" 2>"$LOGS/direct-$1.err"; echo "  round $1 here: rc=$?"; }
  remote() { "$BIN" bench --variants $V --max-seconds 2 --json --worker-cmd "$BIN worker" \
      --record "$OUT/remote-bench-$1.jsonl" >"$LOGS/remote-$1.json" 2>"$LOGS/remote-$1.err"; echo "  round $1 via worker: rc=$?"; }
  # Round 1 here first, round 2 the worker first: an order effect shows.
  direct 1; remote 1; remote 2; direct 2
  python3 - "$LOGS" <<'PY'
import json, sys, statistics
logs = sys.argv[1]
def rows(p):
    try: return {r["variant"]: r.get("median_us") for r in json.load(open(p))["results"]}
    except Exception as e: return {"error": str(e)}
d = [rows(f"{logs}/direct-{i}.json") for i in (1, 2)]
r = [rows(f"{logs}/remote-{i}.json") for i in (1, 2)]
print(f"  {'variant':<28} {'here µs':>16} {'via worker µs':>16} {'via ÷ here':>10}")
for v in d[0]:
    h = [x[v] for x in d if x.get(v)]; w = [x[v] for x in r if x.get(v)]
    if h and w:
        print(f"  {v:<28} {' / '.join(f'{x:.2f}' for x in h):>16} {' / '.join(f'{x:.2f}' for x in w):>16} {statistics.mean(w)/statistics.mean(h):>10.4f}")
PY
  grep -h "attnscope:" "$LOGS"/remote-*.err | sort | uniq -c | head -5 | sed 's/^/  /'
  say "remote: sweep --devices all (3 shapes × causal both × 2 variants)"
  "$BIN" sweep --devices all --shapes '2,8,512,64;4,16,4096,64;2,16,2048,128' --causal both \
    --variants mma+async@64x64s2w4g,cudnn --max-seconds 1 --out "$OUT/sweep.jsonl" >"$LOGS/sweep.log" 2>&1
  echo "  rc=$?"; sed 's/^/  /' "$LOGS/sweep.log" | head -60
  say "remote: the same sweep through a worker command (run mode), one shape"
  "$BIN" sweep --worker-cmd "$BIN worker" --shapes 2,8,512,64 --variants mma+async@64x64s2w4g,cudnn \
    --max-seconds 1 --out "$OUT/sweep-remote.jsonl" >"$LOGS/sweep-remote.log" 2>&1
  echo "  rc=$?"; sed 's/^/  /' "$LOGS/sweep-remote.log" | tail -6
fi

if want remotetour && command -v script >/dev/null; then
  say "remote tour: live --worker-cmd 'sh -c \"attnscope worker\"' (pty 120x40, recorded)"
  # wmma+pv+async → g → d (cuDNN), a → d back, M and t eighteen times to
  # 64x128s2w8k2g, b → x: the race cuDNN vs the wgmma tile, interleaved.
  ( sleep 4; printf g; sleep 4; printf d; sleep 3; printf a; sleep 1; printf d; sleep 2; printf M; sleep 1
    for i in $(seq 18); do printf t; sleep 0.4; done; sleep 2; printf b; sleep 1; printf x; sleep 60 ) \
    | TERM=xterm-256color script -qfec \
      "stty cols 120 rows 40; exec $BIN live --worker-cmd 'sh -c \"$BIN worker\"' --record $OUT/remote-tour.jsonl --ab-seconds 8" /dev/null >"$LOGS/remote-tour-tty.log" 2>&1 &
  sleep 45
  pkill -TERM -f "^$BIN live"; sleep 3; pkill -f 'sleep 60'; wait 2>/dev/null
  written=$(grep -ao 'closed: [0-9]* events written' "$LOGS/remote-tour-tty.log" | grep -o '[0-9]*' | tail -1)
  "$BIN" replay "$OUT/remote-tour.jsonl" --summary >"$LOGS/remote-tour-summary.log" 2>&1
  say "  ${written:-?} events written; summary:"
  grep -vE '^\s+(l1tex|sm__|smsp|dram)' "$LOGS/remote-tour-summary.log" | head -30 | sed 's/^/  /'
  grep -A3 '^A/B\|race' "$LOGS/remote-tour-summary.log" | head -8 | sed 's/^/  /'
fi

if want remotesoak && command -v script >/dev/null; then
  S=${SOAK_S:-540}
  say "remote soak: live --worker-cmd for $S s (pty 120x40, recorded; w and x every 4 s)"
  rm -f "$LOGS/soak-worker.err"
  ( sleep 3; end=$((SECONDS+S)); while [ $SECONDS -lt $end ]; do printf w; sleep 4; printf x; sleep 4; done; sleep 60 ) \
    | TERM=xterm-256color script -qfec \
      "stty cols 120 rows 40; exec $BIN live --worker-cmd '$BIN worker 2>>$LOGS/soak-worker.err' --ab-seconds 3 --record $OUT/remote-soak.jsonl" /dev/null >"$LOGS/remote-soak-tty.log" 2>&1 &
  echo "t_s dashboard_rss_kib worker_rss_kib file_bytes" > "$OUT/remote-soak-rss.log"
  for i in $(seq 0 30 $S); do
    sleep $([ $i -eq 0 ] && echo 3 || echo 30)
    ui=$(pgrep -f "^$BIN live" | head -1); wk=$(pgrep -f "^$BIN worker" | head -1)
    echo "$i $(awk '/VmRSS/{print $2}' /proc/$ui/status 2>/dev/null) $(awk '/VmRSS/{print $2}' /proc/$wk/status 2>/dev/null) $(stat -c %s $OUT/remote-soak.jsonl 2>/dev/null)" >> "$OUT/remote-soak-rss.log"
  done
  pkill -TERM -f "^$BIN live"; sleep 4; pkill -f "sleep 60"; wait 2>/dev/null
  written=$(grep -ao 'closed: [0-9]* events written' "$LOGS/remote-soak-tty.log" | grep -o '[0-9]*' | tail -1)
  sent=$(grep -o 'sent [0-9]* events' "$LOGS/soak-worker.err" | grep -o '[0-9]*' | tail -1)
  cp "$LOGS/soak-worker.err" "$OUT/remote-soak-worker.err"
  python3 - "$OUT/remote-soak.jsonl" "${written:-0}" "${sent:-0}" "$S" "$OUT/remote-soak-rss.log" <<'PY'
import json, sys
path, written, sent, secs, rss = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
n = link = 0
for l in open(path):
    e = json.loads(l)["event"]; n += 1
    if e["type"] == "error" and e.get("source") == "link": link += 1
r = [l.split() for l in open(rss).read().splitlines()[1:] if len(l.split()) == 4]
print(f"  {n} events in the file ({written} written, {n/secs:.1f}/s); worker sent {sent}; from the worker {n - link}; dropped {sent - (n - link)}; link errors {link}")
print(f"  dashboard RSS {int(r[0][1])/1024:.1f} → {int(r[-1][1])/1024:.1f} MiB (max {max(int(x[1]) for x in r)/1024:.1f}); worker {int(r[0][2])/1024:.1f} → {int(r[-1][2])/1024:.1f} MiB; file {int(r[-1][3])/1e6:.1f} MB")
PY
  "$BIN" replay "$OUT/remote-soak.jsonl" --summary --json --strict | python3 -c "import json,sys; d=json.load(sys.stdin); print(f'  replayed with --strict: {d[\"events\"]} events')"
  gzip -f "$OUT/remote-soak.jsonl"
fi

if want remotekernels; then
  say "remote kernels: a kernel folder sent as text to a worker command (headless: bench, ab with --also)"
  "$BIN" bench --kernels examples/rowwarp --worker-cmd "$BIN worker" --variants plain,smem+exp2 \
    --max-seconds 1 --record "$OUT/remote-rowwarp-bench.jsonl" 2>"$LOGS/rk-bench.err" | sed 's/^/  /' | tail -6
  echo "  rc=${PIPESTATUS[0]}"; tail -2 "$LOGS/rk-bench.err" | sed 's/^/  /'
  rm -rf /tmp/rk-ab; cp -r examples/rowwarp /tmp/rk-ab
  "$BIN" ab --a /tmp/rk-ab:smem+exp2 --b mma+async@64x128s2w8k2g --worker-cmd "cd / && $BIN worker" \
    2>"$LOGS/rk-ab.err" | sed 's/^/  /' | tail -4
  echo "  rc=${PIPESTATUS[0]}"; grep -v telemetry "$LOGS/rk-ab.err" | tail -3 | sed 's/^/  /' 
  if command -v script >/dev/null; then
    say "remote kernels: live --kernels (a copy of rowwarp) through a worker command; the .cu edited at 8 s"
    rm -rf /tmp/rk && cp -r examples/rowwarp /tmp/rk
    ( sleep 5; printf h; sleep 2; printf h; sleep 30 ) | TERM=xterm-256color script -qfec \
      "stty cols 120 rows 40; exec $BIN live --kernels /tmp/rk --worker-cmd '$BIN worker' --record $OUT/remote-kernels-live.jsonl" /dev/null >"$LOGS/rk-tty.log" 2>&1 &
    sleep 8; printf '\n// edited while live over the link\n' >> /tmp/rk/rowwarp.cu
    sleep 8
    pkill -TERM -f "^$BIN live"; sleep 3; pkill -f 'sleep 30'; wait 2>/dev/null
    python3 - "$OUT/remote-kernels-live.jsonl" <<'PY'
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
h = ev[0]["event"]
print("  header kernels:", [(k["label"], k["name"], k.get("dir"), (k.get("source_hash") or "")[:16]) for k in h.get("kernels", [])])
for e in ev:
    x = e["event"]
    if x["type"] in ("build_finished", "build_failed", "error", "kernel_loaded"):
        what = x.get("variant") or x.get("label") or ""
        extra = x.get("source_hash") or x.get("message", "")[:120]
        print(f"  {e['t_us']/1e6:6.2f}s {x['type']:<15} {what} {extra}")
PY
  fi
fi

if want twogpu; then
  say "two GPUs: $(nvidia-smi -L | wc -l) here"
  nvidia-smi --query-gpu=index,pci.bus_id,uuid,name --format=csv,noheader | sed 's/^/  /'
  V=mma+async@64x128s2w8k2g
  say "1. GPU 0 loaded by a PyTorch matmul loop; bench --device 1, then CUDA_VISIBLE_DEVICES=1 bench; nvidia-smi every 200 ms"
  python3 -c "
import torch, time
a = torch.randn(8192, 8192, device='cuda:0', dtype=torch.float16)
end = time.time() + 30
while time.time() < end:
    for _ in range(20): a @ a
    torch.cuda.synchronize()
" & LOAD=$!
  sleep 4
  nvidia-smi --query-gpu=timestamp,index,clocks.sm,power.draw,utilization.gpu --format=csv,noheader,nounits -lms 200 > "$OUT/twogpu-smi.csv" & SMI=$!
  "$BIN" bench --device 1 --variants $V --max-seconds 4 --telemetry-hz 20 --record "$OUT/twogpu-device1.jsonl" >"$LOGS/tg-dev1.log" 2>&1; echo "  --device 1: rc=$?"
  CUDA_VISIBLE_DEVICES=1 "$BIN" bench --variants $V --max-seconds 4 --telemetry-hz 20 --record "$OUT/twogpu-cvd1.jsonl" >"$LOGS/tg-cvd1.log" 2>&1; echo "  CUDA_VISIBLE_DEVICES=1: rc=$?"
  kill $SMI; wait $LOAD 2>/dev/null
  python3 - "$OUT" <<'PY'
import csv, datetime, json, sys
out = sys.argv[1]
smi = []
for row in csv.reader(open(f"{out}/twogpu-smi.csv")):
    try:
        t = datetime.datetime.strptime(row[0].strip(), "%Y/%m/%d %H:%M:%S.%f").replace(tzinfo=datetime.timezone.utc).timestamp()
        smi.append((t, int(row[1]), float(row[2]), float(row[3]), float(row[4])))
    except (ValueError, IndexError):
        pass
for name in ("twogpu-device1", "twogpu-cvd1"):
    ev = [json.loads(l)["event"] | {"t_us": json.loads(l)["t_us"]} for l in open(f"{out}/{name}.jsonl")]
    h = ev[0]; g = h.get("gpu") or {}
    t0 = h["started_unix_ms"] / 1000
    d = {0: [0, 0, 0], 1: [0, 0, 0]}
    for e in ev:
        if e["type"] != "telemetry":
            continue
        t = t0 + e["t_us"] / 1e6
        for i in (0, 1):
            near = min((r for r in smi if r[1] == i), key=lambda r: abs(r[0] - t), default=None)
            if near and abs(near[0] - t) < 0.5:
                d[i][0] += abs(near[2] - e["sm_clock_mhz"]); d[i][1] += abs(near[3] - e["power_w"]); d[i][2] += 1
    print(f"  {name}: header uuid {g.get('uuid')} bus {g.get('pci_bus_id')}")
    for i in (0, 1):
        n = max(d[i][2], 1)
        print(f"    vs nvidia-smi -i {i}: mean |Δclock| {d[i][0]/n:.0f} MHz, mean |Δpower| {d[i][1]/n:.1f} W over {d[i][2]} samples")
busy = {}
for r in smi:
    busy.setdefault(r[1], []).append(r[4])
print("  nvidia-smi utilization during the benches: " + ", ".join(f"GPU {i} median {sorted(v)[len(v)//2]:.0f}%" for i, v in sorted(busy.items())))
PY
  say "2. sweep --devices all (both GPUs at once), 3 shapes × 2 variants"
  nvidia-smi --query-gpu=timestamp,index,utilization.gpu --format=csv,noheader,nounits -lms 200 > "$OUT/twogpu-sweep-smi.csv" & SMI=$!
  "$BIN" sweep --devices all --shapes '2,8,512,64;4,16,4096,64;2,16,2048,128' --variants $V,cudnn --max-seconds 2 \
    --out "$OUT/twogpu-sweep.jsonl" >"$LOGS/tg-sweep.log" 2>&1; echo "  rc=$?"
  kill $SMI
  awk -F, '$3+0 > 50 {busy[$2+0]++} END {for (i in busy) printf "  GPU %d above 50%% busy in %d samples\n", i, busy[i]}' "$OUT/twogpu-sweep-smi.csv"
  "$BIN" replay "$OUT/twogpu-sweep.jsonl" --summary > "$LOGS/tg-sweep-summary.txt" 2>&1
  sed -n '1,4p;/across sources/,/^$/p' "$LOGS/tg-sweep-summary.txt" | sed 's/^/  /'
  python3 - "$OUT/twogpu-sweep.jsonl" <<'PY'
import json, sys
runs = {}
for l in open(sys.argv[1]):
    e = json.loads(l)["event"]
    if e["type"] == "measurement_done":
        tag, name = e["variant"].split(":", 1)
        s = e["shape"]; key = (name, f"B{s['b']} H{s['h']} S{s['s']} D{s['d']}")
        runs.setdefault(key, {})[tag] = (e["median_ns"], e.get("ci_low_ns"), e.get("ci_high_ns"))
for key, r in runs.items():
    if len(r) == 2 and all(x[1] is not None and x[2] is not None for x in r.values()):
        (a, al, ah), (b, bl, bh) = r.get("gpu0"), r.get("gpu1")
        overlap = al is not None and bl is not None and al <= bh and bl <= ah
        print(f"  {key[0]:<26} {key[1]:<20} gpu0 {a/1e3:8.2f} [{al/1e3:.2f}, {ah/1e3:.2f}]  gpu1 {b/1e3:8.2f} [{bl/1e3:.2f}, {bh/1e3:.2f}]  {'intervals overlap' if overlap else 'DISJOINT'}  gpu1/gpu0 {b/a:.4f}")
PY
  if command -v script >/dev/null; then
    say "3. live --device 1, F (fault) at 6 s: the worker restarts on GPU 1"
    ( sleep 6; printf 'F'; sleep 40 ) | ATTNSCOPE_TEST_FAULTS=1 TERM=xterm-256color script -qfec \
      "stty cols 120 rows 40; exec $BIN live --device 1 --variant scalar --record $OUT/twogpu-fault.jsonl" /dev/null >"$LOGS/tg-fault-tty.log" 2>&1 &
    sleep 4; echo "  before F: $(nvidia-smi --query-compute-apps=pid,gpu_bus_id,process_name --format=csv,noheader | grep -i attnscope | tr '\n' ';')"
    sleep 10; echo "  after F:  $(nvidia-smi --query-compute-apps=pid,gpu_bus_id,process_name --format=csv,noheader | grep -i attnscope | tr '\n' ';')"
    pkill -TERM -f "^$BIN live"; sleep 3; pkill -f 'sleep 40'; wait 2>/dev/null
    grep -o '"source":"[a-z]*","message":"[^"]*"' "$OUT/twogpu-fault.jsonl" | cut -c1-300 | sed 's/^/  /'
    python3 -c "
import json
h = json.loads(open('$OUT/twogpu-fault.jsonl').readline())['event']['gpu']
print('  header:', h.get('uuid'), h.get('pci_bus_id'))"
  fi
  "$BIN" merge "$OUT/twogpu-device1.jsonl" "$OUT/twogpu-cvd1.jsonl" --out "$OUT/twogpu-device1-vs-cvd1.jsonl" --labels dev1,cvd1 >/dev/null 2>&1
fi

# Issue 21, kernel round two: the full selftest (every tile t cycles through,
# the new ones included), both sanitizers on the new tiles at shapes with
# partial tiles, then every new tile against cuDNN and the previous best at
# the issue's shapes, back to back (after 0.5 s of warm load), and isolated
# at S=512 and D=128.
R2_NEW="mma+async@128x64s2w8g mma+async@128x128s2w8g mma+async@128x128s2w8gq mma+async@128x64s3w8gq mma+async@64x128s3w4gq mma+async@128x128s3w8gq"
if want round2; then
  say "selftest (full)"; selftest_run
  say "sanitizers on the new tiles (causal, partial tiles, D 64 and 128)"
  for v in $R2_NEW; do for tool in memcheck racecheck; do for shape in 1,3,333,64 1,3,333,128; do
    sanitize_run "$tool" "$v" $shape --causal &
  done; done; done | sort
  wait
  for spec in "2,8,512,64|" "2,8,512,64|--causal" "4,16,4096,64|" "4,16,4096,64|--causal" "2,16,2048,128|" \
              "1,32,8192,128|--causal" "1,16,16384,128|" "1,16,16384,128|--causal"; do
    shape=${spec%|*}; causal=${spec#*|}
    case $shape in *,64) old="mma+async@64x128s2w8k2g,mma+async@64x128s2w4g";; *) old="mma+async@64x64s2w4g";; esac
    vs="cudnn,$old,$(echo $R2_NEW | tr ' ' ',')"
    tag="${shape//,/x}${causal:+c}"
    for regime in back-to-back isolated; do
      [[ $regime == isolated && $shape != 2,8,512,64 && $shape != 2,16,2048,128 ]] && continue
      say "bench $shape $causal $regime"
      "$BIN" bench --shape $shape $causal --variants "$vs" --regime $regime --warm-seconds 0.5 --max-seconds 1 \
        --telemetry-hz 0 --record "$OUT/r2-$tag-$regime.jsonl" 2>&1 | tee "$LOGS/r2-$tag-$regime.log" | tail -n +4 | sed 's/^/  /'
    done
  done
fi

# Issue 18: attnscope's cudnn against PyTorch's, both sustained and gapless,
# alternating rounds; then Nsight Compute's bracket, read off a kernel that
# does nothing (bench/empty), beside cuDNN at S=512, ncu and CUPTI.
if want fidelity; then
  say "cuDNN fidelity, sustained, alternating (bench/cudnn_fidelity.py)"
  PYTHONUNBUFFERED=1 python3 bench/cudnn_fidelity.py --bin "$BIN" --json "$OUT/fidelity.json" 2>&1 | tee "$LOGS/fidelity.log" | sed 's/^/  /'
  say "the timers' floor: an empty kernel and cuDNN at B2 H8 S512 D64"
  for cc in all none; do
    for v in "--kernels bench/empty --variant nop" "--variant cudnn" "--variant $G"; do
      f="$LOGS/ncu-$cc-$(echo $v | tr -c 'a-z0-9' _).csv"
      ncu --metrics gpu__time_duration.sum --clock-control none --cache-control $cc --csv "$BIN" launch $v \
        --shape 2,8,512,64 --count 9 >"$f" 2>&1
      ncu_median "$f" "$(printf 'cache-control %-4s %-36s' "$cc" "$v")"
    done
  done | tee "$LOGS/floor.txt"
  for regime in isolated back-to-back; do
    "$BIN" bench --kernels bench/empty --variants nop --shape 2,8,512,64 --regime $regime --max-seconds 1 --telemetry-hz 0 --json \
      | python3 -c "import json,sys; r=json.load(sys.stdin)['results'][0]; print(f'  CUPTI $regime nop median {r[\"median_us\"]:.3f} µs')"
    "$BIN" bench --variants "cudnn,$G" --shape 2,8,512,64 --regime $regime --max-seconds 1 --telemetry-hz 0 --json \
      | python3 -c "import json,sys; [print(f'  CUPTI $regime {r[\"variant\"]} median {r[\"median_us\"]:.3f} µs') for r in json.load(sys.stdin)['results']]"
  done | tee -a "$LOGS/floor.txt"
fi

# Issue 21's counters before and after a step (docs/perf-log.md), and the
# tile `tune` picks at D=128 now that the new tiles are candidates.
if want round2counters; then
  for spec in "2,16,2048,128 mma+async@64x64s2w4g" "2,16,2048,128 mma+async@128x128s3w8gq" \
              "4,16,4096,64 mma+async@64x128s2w4g" "4,16,4096,64 mma+async@128x128s2w8gq"; do
    set -- $spec
    say "gates $2 at $1"
    "$BIN" gates --variant "$2" --shape "$1" --max-seconds 0.5 2>&1 | tee "$LOGS/gates-$2-$1.log" \
      | grep -iE 'occupancy|tensor|bank|dram|registers|shared memory per|gpu__time|spill' | sed 's/^/  /'
  done
  say "tune mma+async at 2,16,2048,128"
  "$BIN" tune --shape 2,16,2048,128 --max-seconds 0.5 2>"$LOGS/tune-d128.err" | tee "$LOGS/tune-d128.log" | head -40 | sed 's/^/  /'
fi

# Issue 21, steps 15 and 16: the producer-warpgroup tiles (p, pt). Every
# command has a time limit: an mbarrier protocol error hangs instead of failing.
#   R2P       the tiles (default: step 15's p tiles); R2P_SAN those sanitized
#   R2P_NAMED=1  `selftest --variants R2P` (every shape and distribution, one
#             process, so tensor maps are rewritten between shapes)
#   R2P_QUICK=1  one bench process per case; neither: the full selftest
#   R2P_GATES "SHAPE VARIANT;..." for `gates`
R2P=${R2P:-"mma+async@128x128s3w8gqp mma+async@128x64s3w8gqp"}
R2P_SAN=${R2P_SAN:-$R2P}
R2P_GATES=${R2P_GATES:-"4,16,4096,64 mma+async@128x128s3w8gqp;2,16,2048,128 mma+async@128x64s3w8gqp"}
if want round2p; then
  if [ -n "${R2P_NAMED:-}" ]; then
    say "selftest --variants (the R2P tiles, limited to 200 s)"
    selftest_run 200 --variants "$(echo $R2P | tr ' ' ',')"
  elif [ -n "${R2P_QUICK:-}" ]; then
    # Only the p tiles, on selftest's adversarial inputs and odd shapes.
    say "correctness of the p tiles (5 input distributions x 4 shapes)"
    for v in $R2P; do for inputs in uniform rising outliers large ties; do
      for spec in "1,3,333,64 --causal" "1,3,333,128 --causal" "2,8,512,64" "1,2,4097,64"; do
        r=$(timeout -k 5 60 "$BIN" bench --shape $spec --variants "$v" --inputs $inputs --launches 1 --telemetry-hz 0 --json 2>&1 \
          | python3 -c "import json,sys; r=json.load(sys.stdin)['results'][0]; print('PASS' if r.get('correct') else 'FAIL', r.get('max_abs_err'))" 2>&1)
        echo "  $v $inputs $spec: $r"
      done
    done; done | tee "$LOGS/p-correctness.log" | grep -v ': PASS' | head -20
    echo "  $(grep -c ': PASS' "$LOGS/p-correctness.log") of $(wc -l <"$LOGS/p-correctness.log") cases pass"
  else
    say "selftest (full, limited to 300 s)"; selftest_run 300
    grep -c 'gqp' "$LOGS/selftest.log" | sed 's/^/  cases with a p tile: /'
  fi
  say "sanitizers on the p tiles (causal, partial tiles, D 64 and 128)"
  for v in $R2P_SAN; do for tool in memcheck racecheck synccheck; do for shape in 1,3,333,64 1,3,333,128; do
    sanitize_run "$tool" "$v" $shape --causal &
  done; done; done | sort
  wait
  for spec in ${R2P_SHAPES:-"4,16,4096,64|" "4,16,4096,64|--causal" "2,16,2048,128|" "1,16,16384,128|" "1,32,8192,128|--causal" "2,8,512,64|"}; do
    shape=${spec%|*}; causal=${spec#*|}
    case $shape in *,64) old="mma+async@64x128s2w8k2g,mma+async@128x128s2w8gq,mma+async@128x128s3w8gq";; *) old="mma+async@128x128s3w8gq,mma+async@128x64s3w8gq";; esac
    tag="${shape//,/x}${causal:+c}"
    say "bench $shape $causal back-to-back"
    bench_r2 r2p "$tag" 8 --shape $shape $causal --variants "cudnn,$old,$(echo $R2P | tr ' ' ',')"
  done
  IFS=';' read -ra gates_specs <<<"$R2P_GATES"
  for spec in "${gates_specs[@]}"; do
    set -- $spec
    say "gates $2 at $1"
    timeout -k 5 120 "$BIN" gates --variant "$2" --shape "$1" --max-seconds 0.5 2>&1 | tee "$LOGS/gates-$2-$1.log" \
      | grep -iE 'tensor pipe|occupancy|registers|gpu__time' | sed 's/^/  /'
  done
fi

# Issue 21, steps 16-17 beyond round2p: every path still correct (quick), the
# oracle's teeth in the ping-pong loop (mutations), the issue's other shapes,
# the isolated regime, step 16's counters alone (pt), and what tune picks.
NEW="mma+async@128x128s3w8gqpto,mma+async@128x64s3w8gqpto,mma+async@128x128s3w8gqpt,mma+async@128x64s3w8gqpt"
if want round2o; then
  say "selftest --quick"; selftest_run 300 --quick
  say "selftest --mutations"
  timeout -k 5 150 "$BIN" selftest --mutations >"$LOGS/mutations.txt" 2>&1; echo "  rc=$?"; sed 's/^/  /' "$LOGS/mutations.txt" | tail -14
  for spec in "4,16,4096,64|--causal" "1,32,8192,128|--causal" "1,16,16384,128|--causal" "2,8,512,64|--causal" \
              "2,16,2048,128|--regime isolated" "4,16,4096,64|--regime isolated"; do
    shape=${spec%|*}; flags=${spec#*|}
    case $shape in *,64) old="mma+async@64x128s2w8k2g,mma+async@128x128s2w8gq";; *) old="mma+async@128x128s3w8gq";; esac
    tag=$(spec_tag "$shape" "$flags")
    say "bench $shape $flags"
    bench_r2 r2o "$tag" 9 --shape $shape $flags --variants "cudnn,$old,$NEW"
  done
  for spec in "4,16,4096,64 mma+async@128x128s3w8gqpt" "2,16,2048,128 mma+async@128x128s3w8gqpt" "2,16,2048,128 mma+async@128x64s3w8gqpt"; do
    set -- $spec
    say "gates $2 at $1"
    timeout -k 5 120 "$BIN" gates --variant "$2" --shape "$1" --max-seconds 0.5 2>&1 | tee "$LOGS/gates-$2-$1.log" \
      | grep -iE 'tensor pipe|occupancy|gpu__time' | sed 's/^/  /'
  done
  for shape in 2,16,2048,128 4,16,4096,64; do
    say "tune mma+async at $shape"
    timeout -k 5 150 "$BIN" tune --shape $shape --max-seconds 0.5 2>"$LOGS/tune-$shape.err" | tee "$LOGS/tune-$shape.log" | head -6 | sed 's/^/  /'
  done
fi

# Issue 21, step 18: causal row blocks heaviest first in p tiles. The non-p
# tiles keep the old order: they are the same-run control.
if want round2c; then
  say "selftest --variants (p tiles, causal cases included)"
  selftest_run 150 --variants "mma+async@128x128s3w8gqpto,mma+async@128x64s3w8gqpt"
  for shape in 4,16,4096,64 1,32,8192,128 1,16,16384,128 2,8,512,64; do
    case $shape in *,64) old="mma+async@64x128s2w8k2g,mma+async@128x128s2w8gq";; *) old="mma+async@128x128s3w8gq";; esac
    say "bench $shape --causal"
    bench_r2 r2c "${shape//,/x}c" 9 --shape $shape --causal --variants "cudnn,$old,$NEW"
  done
fi

# Issue 21, step 19 adopted, and where the kernel stands: every path (quick),
# the wgmma tiles at D=128 (FADD row sums), sanitizers, every shape of the
# issue with cuDNN, the best earlier tile and the tuned o tile in one call.
if want round2f; then
  say "selftest --quick"; selftest_run 300 --quick; cp "$LOGS/selftest.log" "$LOGS/selftest-quick.log"
  say "selftest --variants (wgmma tiles, split and not)"
  selftest_run 150 --variants "mma+async@128x128s3w8gqpto,mma+async@128x64s3w8gqpt,mma+async@64x64s2w8k2g,mma+async@64x64s2w4g,mma+async@128x128s2w8gq,mma+async@128x128s2w8g,mma+async@64x128s2w4g"
  for tool in memcheck racecheck; do sanitize_run $tool mma+async@128x128s3w8gqpto 1,3,333,128 --causal & done; wait
  for spec in "2,8,512,64|" "2,8,512,64|--causal" "4,16,4096,64|" "4,16,4096,64|--causal" "2,16,2048,128|" \
              "1,32,8192,128|--causal" "1,16,16384,128|" "1,16,16384,128|--causal"; do
    shape=${spec%|*}; flags=${spec#*|}
    case $shape in 2,8,512,64) old="mma+async@64x128s2w8k2g";; *,64) old="mma+async@128x128s2w8gq";; *) old="mma+async@128x128s3w8gq";; esac
    tag=$(spec_tag "$shape" "$flags")
    say "bench $shape $flags"
    bench_r2 r2f "$tag" 4 --shape $shape $flags --variants "cudnn,$old,mma+async@128x128s3w8gqpto"
  done
  say "gates mma+async@128x128s3w8gqpto at 2,16,2048,128"
  timeout -k 5 120 "$BIN" gates --variant mma+async@128x128s3w8gqpto --shape 2,16,2048,128 --max-seconds 0.5 2>&1 \
    | tee "$LOGS/gates-r2f.log" | grep -iE 'tensor pipe|gpu__time' | sed 's/^/  /'
fi

# Issue 21, step 20: persistent CTAs (r). The oracle on the r tiles (shapes
# with more row blocks than SMs included), sanitizers where CTAs walk several
# row blocks, the kernel before this step raced against this one (exp-kernels/
# prev, when carried), and every shape of the issue with cuDNN, the o tile and
# the r tiles in one call, both regimes where they differ most.
R2R="mma+async@128x128s3w8gqptor,mma+async@128x64s3w8gqptor,mma+async@128x128s3w8gqptr,mma+async@128x128s3w8gqpto"
R2R_OLD=${R2R_OLD:-"mma+async@128x128s3w8gqpto mma+async@64x128s2w8k2g"}
if want round2r; then
  say "selftest --variants $R2R"
  selftest_run 170 --variants "$R2R"
  if [ -d exp-kernels ]; then
    for d in exp-kernels/*/; do
      say "race the kernel before step 20 ($d) against this one: $R2R_OLD"
      for spec in "2,16,2048,128|" "4,16,4096,64|" "2,8,512,64|"; do
        shape=${spec%|*}; flags=${spec#*|}
        list="cudnn"; for v in $R2R_OLD; do list="$list,bundled:$v,${d%/}:$v"; done
        bench_r2 r2r-prev "${shape//,/x}" 6 --kernels "${d%/}" --shape $shape $flags --variants "$list"
      done
    done
  fi
  for spec in "2,8,512,64|" "2,8,512,64|--causal" "4,16,4096,64|" "4,16,4096,64|--causal" "2,16,2048,128|" \
              "1,32,8192,128|--causal" "1,16,16384,128|" "1,16,16384,128|--causal" \
              "2,16,2048,128|--regime isolated" "4,16,4096,64|--regime isolated"; do
    shape=${spec%|*}; flags=${spec#*|}
    case $shape in 2,8,512,64) old="mma+async@64x128s2w8k2g,";; *) old="";; esac
    case $shape in *,64) r="mma+async@128x128s3w8gqptor,mma+async@128x64s3w8gqptor";; *) r="mma+async@128x128s3w8gqptor";; esac
    tag=$(spec_tag "$shape" "$flags")
    say "bench $shape $flags"
    bench_r2 r2r "$tag" 5 --shape $shape $flags --variants "cudnn,${old}mma+async@128x128s3w8gqpto,$r"
  done
  for v in mma+async@128x128s3w8gqpto mma+async@128x128s3w8gqptor; do
    say "gates $v at 2,16,2048,128"
    timeout -k 5 120 "$BIN" gates --variant $v --shape 2,16,2048,128 --max-seconds 0.5 2>&1 \
      | tee "$LOGS/gates-r2r-$v.log" | grep -iE 'tensor pipe|gpu__time' | sed 's/^/  /'
  done
  say "sanitizers on the r tiles (causal, partial tiles, several row blocks per CTA)"
  { sanitize_three mma+async@128x128s3w8gqptor 2,48,333,128 --causal &
    sanitize_three mma+async@128x64s3w8gqptor 4,64,333,64 --causal & wait; } | sort
  pack_sessions r2r
fi

# Issue 21, step 21: three consumer warpgroups (192-row tiles, w12). The
# oracle on them and its teeth in their loop (mutations), sanitizers, and the
# D=64 shapes with cuDNN and the two-warpgroup tiles in one call.
R2W="mma+async@192x128s3w12gqpto,mma+async@192x128s3w12gqptor,mma+async@192x64s3w12gqptor"
if want round2w; then
  say "selftest --variants $R2W"
  selftest_run 200 --variants "$R2W"
  say "selftest --mutations"
  timeout -k 5 150 "$BIN" selftest --mutations >"$LOGS/mutations.txt" 2>&1; echo "  rc=$?"; sed 's/^/  /' "$LOGS/mutations.txt" | tail -16
  for spec in "4,16,4096,64|" "4,16,4096,64|--causal" "4,16,4096,64|--regime isolated" "2,8,512,64|" "2,8,512,64|--causal" \
              "2,16,2048,128|"; do
    shape=${spec%|*}; flags=${spec#*|}
    case $shape in
      2,8,512,64) v="mma+async@64x128s2w8k2g,mma+async@128x128s3w8gqptor,mma+async@192x128s3w12gqpto";;
      *,64) v="mma+async@128x128s3w8gqptor,mma+async@192x128s3w12gqpto,mma+async@192x128s3w12gqptor";;
      *) v="mma+async@128x128s3w8gqptor,mma+async@192x64s3w12gqptor";;
    esac
    tag=$(spec_tag "$shape" "$flags")
    say "bench $shape $flags"
    bench_r2 r2w "$tag" 5 --shape $shape $flags --variants "cudnn,$v"
  done
  say "gates mma+async@192x128s3w12gqptor at 4,16,4096,64"
  timeout -k 5 120 "$BIN" gates --variant mma+async@192x128s3w12gqptor --shape 4,16,4096,64 --max-seconds 0.5 2>&1 \
    | tee "$LOGS/gates-r2w.log" | grep -iE 'tensor pipe|gpu__time' | sed 's/^/  /'
  say "sanitizers on the w12 tiles (causal, partial tiles, several row blocks per CTA)"
  { sanitize_three mma+async@192x128s3w12gqptor 4,64,333,64 --causal &
    sanitize_three mma+async@192x64s3w12gqptor 2,48,333,128 --causal & wait; } | sort
  pack_sessions r2w
fi

# Issue 21, step 40 (reverted): e for three warpgroups and D = 64, where the
# mma.sync row sums decide, from a kernel copy built from its patch:
#   d=exp-kernels/ef64; mkdir -p $d && cp kernels/attention.* $d/ &&
#   patch -p2 -d $d <docs/data/2026-11-25-h100/run89-exp-first-d64/kernel.patch
# The oracle, the planted bugs (rising), the sanitizers and the same inputs
# with and without e, then cuDNN and the tiles with and without e in one call
# per shape and regime, and ncu, at B4 H16 S4096 D64.
R2EF64_KERNELS=${R2EF64_KERNELS:-exp-kernels/ef64}
R2EF64_SPECS=${R2EF64_SPECS:-"4,16,4096,64|;4,16,4096,64|--regime isolated;4,16,4096,64|--causal;4,16,4096,64|--causal --regime isolated"}
if want round2ef64 && [ ! -f "$R2EF64_KERNELS/attention.cu" ]; then
  say "round2ef64: no $R2EF64_KERNELS/attention.cu (build it from its patch, above)"
elif want round2ef64; then
  K=$R2EF64_KERNELS
  say "selftest --kernels $K --variants mma+async@192x128s3w12gqptore,mma+async@128x128s3w8gqptorae"
  selftest_run 300 --kernels "$K" --variants mma+async@192x128s3w12gqptore,mma+async@128x128s3w8gqptorae
  say "selftest --kernels $K --mutations --inputs rising"
  mutations_run 200 'mutexp|mutrescale.*gqptor|every planted|missed' --kernels "$K" --inputs rising
  say "sanitizers (partial tiles, several rounds, causal)"
  { sanitize_three mma+async@192x128s3w12gqptore 4,64,333,64 --inputs rising --kernels "$K" &
    sanitize_three mma+async@192x128s3w12gqptore 2,48,333,64 --causal --kernels "$K" &
    sanitize_three mma+async@128x128s3w8gqptorae 4,64,333,64 --inputs rising --kernels "$K" & wait; } | sort
  say "the same inputs with and without e (a 64-key tile too): max and relative L2 errors"
  for spec in "4,16,1024,64|" "4,16,1024,64|--causal" "2,48,333,64|"; do
    for pair in 192x128s3w12gqptor:192x128s3w12gqptore 128x128s3w8gqptora:128x128s3w8gqptorae; do
      for inputs in rising uniform outliers; do
        same_errors "$spec ${pair%:*}" "${spec%|*}" "${spec#*|}" $inputs \
          "mma+async@${pair%:*},mma+async@${pair#*:},mma+async@128x64s3w8gqptor" --kernels "$K"
      done
    done
  done
  list="cudnn,mma+async@192x128s3w12gqptor,mma+async@192x128s3w12gqptore,mma+async@128x128s3w8gqptorae"
  bench_specs r2ef64 6 "$R2EF64_SPECS" "$list" "$list" --kernels "$K"
  ncu_variants r2ef64-ncu gpu__time_duration.sum,smsp__inst_executed.sum,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active,l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum \
    "${list//,/ }" --kernels "$K" --shape 4,16,4096,64
  pack_sessions r2ef64
fi

# How often NVML's energy counter moves and what one read costs (the
# telemetry sampler refreshes each query as often as its CPU share allows).
if want nvmlenergy; then
  say "NVML energy counter: 400 reads idle, then 400 under load"
  python3 - <<'PY' 2>&1 | sed 's/^/  /'
import ctypes, time, threading
nvml = ctypes.CDLL("libnvidia-ml.so.1"); nvml.nvmlInit_v2()
h = ctypes.c_void_p(); nvml.nvmlDeviceGetHandleByIndex_v2(0, ctypes.byref(h))
def reads(label):
    e = ctypes.c_ulonglong(); vals = []; cpu = time.thread_time(); t0 = time.perf_counter()
    for _ in range(400):
        nvml.nvmlDeviceGetTotalEnergyConsumption(h, ctypes.byref(e)); vals.append((time.perf_counter(), e.value))
        time.sleep(0.002)
    cpu = (time.thread_time() - cpu) / 400; wall = vals[-1][0] - t0
    ch = [t for (t, v), (_, p) in zip(vals[1:], vals) if v != p]
    gaps = sorted(b - a for a, b in zip(ch, ch[1:]))
    print(f"{label}: {len(ch)} changes in {wall:.2f} s, median gap {gaps[len(gaps)//2]*1e3 if gaps else float('nan'):.1f} ms, "
          f"{cpu*1e6:.0f} µs CPU a read, step {(vals[-1][1]-vals[0][1])/max(1,len(ch)):.0f} mJ")
reads("idle")
import torch
a = torch.randn(8192, 8192, device="cuda", dtype=torch.half); stop = False
def load():
    while not stop: a @ a
threading.Thread(target=load, daemon=True).start(); time.sleep(1)
reads("matmul loop"); stop = True
PY
fi

# Issue 21's last steps. tune2: what `tune` picks among every tile (the new ones
# included) at the issue's shapes. tour2: the final tour, recorded to
# $OUT/tour2.jsonl: scalar and the seeds' toggles at B2 H8 S512 D64, then
# B4 H16 S4096 D64 (s three times), the mma path and t through every tile of
# rounds one and two to 192x128s3w12gqptor (what tune picks there), isolated
# for a while, checks on other inputs, cuDNN, and the race cuDNN vs that
# tile, interleaved.
if want tune2; then
  for spec in ${TUNE2_SPECS:-"2,16,2048,128|" "4,16,4096,64|" "4,16,4096,64|--causal"}; do
    shape=${spec%|*}; flags=${spec#*|}
    say "tune mma+async at $shape $flags"
    timeout -k 5 200 "$BIN" tune --shape $shape $flags --max-seconds 0.5 2>"$LOGS/tune2-${shape//,/x}$flags.err" \
      | tee "$LOGS/tune2-${shape//,/x}$flags.log" | head -7 | sed 's/^/  /'
  done
fi
if want tour2 && command -v script >/dev/null; then
  say "tour2 (live, pty 120x40)"
  # Keys come on a clock: a fresh machine builds each tile for about 0.7 s,
  # slower than t comes, so the 20 s after the tiles let the queue drain
  # before g, R and the race (run 58 raced cuDNN against itself without).
  ( sleep 4; printf g; sleep 2; for k in w p c; do printf "$k"; sleep 2; done; printf g; sleep 2
    for i in 1 2 3; do printf s; sleep 1.5; done; sleep 2
    printf M; sleep 2; for i in $(seq 36); do printf t; sleep 0.5; done; sleep 20; printf g; sleep 3
    printf R; sleep 5; printf R; sleep 2; printf I; sleep 1; printf I; sleep 2
    printf d; sleep 3; printf g; sleep 3; printf a; sleep 1; printf d; sleep 3; printf b; sleep 1
    printf 'm'; sleep 1; printf 'x'; sleep 60 ) \
    | TERM=xterm-256color script -qfec \
      "stty cols 120 rows 40; exec $BIN live --variant scalar --record $OUT/tour2.jsonl --ab-seconds 8" /dev/null >"$LOGS/tour2-tty.log" 2>&1 &
  sleep 125
  pkill -TERM -x attnscope; sleep 3
  pkill -KILL -x attnscope && say "  tour2 had to be SIGKILLed"
  pkill -f 'sleep 60'; wait 2>/dev/null
  say "  terminal restored: $(grep -c $'\e\[?1049l' "$LOGS/tour2-tty.log")"
  "$BIN" replay "$OUT/tour2.jsonl" --summary | grep -vE '^\s+(l1tex|sm__|smsp|dram)' | head -70
  gzip -f "$OUT/tour2.jsonl"
fi

# Issue 21, step 23: causal row blocks aligned to end at S in TMA tiles (the
# partial block first). The oracle on odd S, sanitizers where rows start
# before 0, and the kernel before the step (exp-kernels/prev) raced against
# this one in one call.
R2A="mma+async@192x128s3w12gqptor,mma+async@192x128s3w12gqpto,mma+async@192x64s3w12gqptor,mma+async@128x128s3w8gqptor,mma+async@128x64s3w8gqpt"
if want round2a; then
  say "selftest --variants $R2A"
  selftest_run 200 --variants "$R2A"
  say "sanitizers (causal, S not a multiple of the block rows)"
  { sanitize_three mma+async@192x128s3w12gqptor 4,64,333,64 --causal &
    sanitize_three mma+async@128x128s3w8gqpto 1,3,333,128 --causal & wait; } | sort
  for spec in "4,16,4096,64|--causal" "4,16,4096,64|" "4,16,4096,64|--causal --regime isolated" "2,8,512,64|--causal" "1,32,8192,128|--causal"; do
    shape=${spec%|*}; flags=${spec#*|}
    case $shape in
      *,128) vs="mma+async@128x128s3w8gqptor";;
      2,8,512,64) vs="mma+async@128x128s3w8gqptor mma+async@192x128s3w12gqpto";;
      *) vs="mma+async@192x128s3w12gqptor mma+async@192x128s3w12gqpto";;
    esac
    list="cudnn"; for v in $vs; do list="$list,bundled:$v"; [ -d exp-kernels/prev ] && list="$list,exp-kernels/prev:$v"; done
    tag=$(spec_tag "$shape" "$flags")
    say "bench $shape $flags"
    bench_r2 r2a "$tag" 6 ${R2A_KERNELS:+--kernels $R2A_KERNELS} --shape $shape $flags --variants "$list"
  done
  pack_sessions r2a
fi

# Issue 21, step 24 (reverted): K before V (v) in two-stage cp.async tiles,
# from the kernel copy kept with run 38. The oracle, sanitizers, and each tile
# with and without v in one call per shape.
R2V="mma+async@64x128s2w8k2gv,mma+async@64x64s2w8k2gv,mma+async@64x128s2w4gv,mma+async@64x64s2w4v"
R2V_KERNELS=${R2V_KERNELS:-docs/data/2026-11-24-h100/run38-kv-split/kernel}
if want round2v; then
  say "selftest --variants $R2V"
  selftest_run 200 --kernels "$R2V_KERNELS" --variants "$R2V"
  say "sanitizers on v tiles"
  { sanitize_three mma+async@64x128s2w8k2gv 1,3,333,64 --causal --kernels "$R2V_KERNELS" &
    sanitize_three mma+async@64x64s2w4v 1,3,333,128 --causal --kernels "$R2V_KERNELS" & wait; } | sort
  for spec in "2,8,512,64|" "2,8,512,64|--causal" "2,8,512,64|--regime isolated" "2,8,512,64|--causal --regime isolated" \
              "2,8,2048,64|" "4,16,4096,64|"; do
    shape=${spec%|*}; flags=${spec#*|}
    list="cudnn"; for v in 64x128s2w8k2g 64x64s2w8k2g 64x128s2w4g; do list="$list,mma+async@$v,mma+async@${v}v"; done
    tag=$(spec_tag "$shape" "$flags")
    say "bench $shape $flags"
    bench_r2 r2v "$tag" 8 --kernels "$R2V_KERNELS" --shape $shape $flags --variants "$list"
  done
  pack_sessions r2v
fi

# Issue 21, where the kernel stands: `selftest --quick`, then every shape of
# the issue with cuDNN and the best tile, timed by CUPTI back to back and
# isolated, and by Nsight Compute (gpu__time_duration, clocks and caches left
# alone, median of the last 7 of 9 launches) for both.
if want round2final; then
  [ -z "${R2F_NO_SELFTEST:-}" ] && { say "selftest --quick"; selftest_run 300 --quick; }
  IFS=';' read -ra fin_specs <<<"${R2F_SPECS:-2,8,512,64||64x128s2w8k2gi;2,8,512,64|--causal|64x128s2w8k2gi;4,16,4096,64||192x128s3w12gqptor;4,16,4096,64|--causal|192x128s3w12gqptor;2,16,2048,128||128x128s3w8gqptorae;1,32,8192,128|--causal|128x128s3w8gqptorae;1,16,16384,128||128x128s3w8gqptorae;1,16,16384,128|--causal|128x128s3w8gqptorae}"
  for spec in "${fin_specs[@]}"; do
    IFS='|' read -r shape flags tile <<<"$spec"
    tag=$(spec_tag "$shape" "$flags")
    for regime in back-to-back isolated; do
      say "bench $shape $flags $regime"
      bench_r2 fin "$tag-$regime" 3 --shape $shape $flags --regime $regime --variants "cudnn,mma+async@$tile"
    done
    for v in cudnn "mma+async@$tile"; do
      f="$LOGS/fin-ncu-$tag-$(echo "$v" | tr -c 'a-z0-9' _).csv"
      ncu_launch "$f" "$(printf '%-26s %-28s' "$shape $flags" "$v")" gpu__time_duration.sum \
        --variant "$v" --shape $shape $flags
    done
  done
  pack_sessions fin
fi

# Issue 21, step 25 (reverted): persistent ping-pong tiles chain their row
# blocks (the next block's first Q·Kᵀ in the turn of this block's last P·V),
# from the kernel copy kept with run 41 (R2K_KERNELS). The oracle and its
# teeth (mutations), sanitizers where CTAs walk many blocks, and the bundled
# kernel (`bundled:` rows) raced against it in one call per shape.
R2K="mma+async@128x128s3w8gqptor,mma+async@192x128s3w12gqptor,mma+async@128x64s3w8gqptor,mma+async@192x64s3w12gqptor"
R2K_KERNELS=${R2K_KERNELS:-docs/data/2026-11-24-h100/run41-chained-b/kernel}
if want round2k; then
  say "selftest --variants $R2K"
  selftest_run 200 --kernels "$R2K_KERNELS" --variants "$R2K"
  say "selftest --mutations"
  mutations_run 150 '192x128s3w12gqptor|every planted' --kernels "$R2K_KERNELS"
  say "sanitizers on the chained tiles"
  { sanitize_three mma+async@128x128s3w8gqptor 2,48,333,128 --causal --kernels "$R2K_KERNELS" &
    sanitize_three mma+async@192x128s3w12gqptor 4,64,333,64 --kernels "$R2K_KERNELS" & wait; } | sort
  IFS=';' read -ra r2k_specs <<<"${R2K_SHAPES:-2,16,2048,128|;2,16,2048,128|--regime isolated;1,16,16384,128|;1,32,8192,128|--causal;1,16,16384,128|--causal;4,16,4096,64|;4,16,4096,64|--causal}"
  for spec in "${r2k_specs[@]}"; do
    shape=${spec%|*}; flags=${spec#*|}
    case $shape in *,128) vs="mma+async@128x128s3w8gqptor";; *) vs="mma+async@192x128s3w12gqptor";; esac
    list="cudnn"; for v in $vs; do list="$list,$v,bundled:$v"; done
    tag=$(spec_tag "$shape" "$flags")
    say "bench $shape $flags"
    bench_r2 r2k "$tag" 4 --kernels "$R2K_KERNELS" --shape $shape $flags --variants "$list"
  done
  pack_sessions r2k
fi

# Issue 21, step 31: persistent tiles keep a second Q buffer (D=64, and
# two-stage D=128 tiles with K and V handed over separately), so the next row
# block's Q loads while this one runs; from the kernel measured in run 52
# (R2Q_KERNELS; the bundled kernel kept the D=64 part). The oracle on every
# persistent tile and the two-stage ones, sanitizers where CTAs walk many
# blocks, and the kernel before it (exp-kernels/prev) raced in one call per
# shape.
R2Q="mma+async@128x128s2w8gqptor,mma+async@128x128s2w8gqpto,mma+async@128x128s3w8gqptor,mma+async@192x128s3w12gqptor,mma+async@128x64s3w8gqptor,mma+async@192x64s3w12gqptor"
R2Q_KERNELS=${R2Q_KERNELS:-docs/data/2026-11-24-h100/run52-qbufs/kernel}
if want round2q; then
  say "selftest --variants $R2Q"
  selftest_run 250 --kernels "$R2Q_KERNELS" --variants "$R2Q"
  say "sanitizers (several row blocks per CTA, both Q buffers, causal)"
  { sanitize_three mma+async@128x128s2w8gqptor 2,48,333,128 --causal --kernels "$R2Q_KERNELS" &
    sanitize_three mma+async@192x128s3w12gqptor 4,64,333,64 --causal --kernels "$R2Q_KERNELS" & wait; } | sort
  IFS=';' read -ra r2q_specs <<<"${R2Q_SHAPES:-2,16,2048,128|;2,16,2048,128|--regime isolated;1,16,16384,128|;1,32,8192,128|--causal;4,16,4096,64|--causal;4,16,4096,64|--causal --regime isolated}"
  for spec in "${r2q_specs[@]}"; do
    shape=${spec%|*}; flags=${spec#*|}
    case $shape in
      *,128) vs="mma+async@128x128s3w8gqptor"; new="mma+async@128x128s2w8gqptor";;
      *) vs="mma+async@192x128s3w12gqptor"; new="";;
    esac
    list="cudnn,$vs${new:+,$new}"
    [ -d exp-kernels/prev ] && list="$list,exp-kernels/prev:$vs"
    tag=$(spec_tag "$shape" "$flags")
    say "bench $shape $flags"
    bench_r2 r2q "$tag" 5 --kernels "$R2Q_KERNELS" --shape $shape $flags --variants "$list"
  done
  pack_sessions r2q
fi

# Issue 21, step 32: persistent tiles copy Q into registers and free its
# buffer at the start of a row block (`a`), so the next block's Q loads under
# this one at D=128 too. The oracle on the `a` tiles and its teeth
# (mutations, planted in 128x128s3w8gqptora too), sanitizers where CTAs walk
# many blocks, cuDNN and the tile without `a` in one call per shape, and ncu
# on both at B2 H16 S2048 D128.
R2QR="mma+async@128x128s3w8gqptora,mma+async@128x64s3w8gqptora,mma+async@192x64s3w12gqptora"
if want round2qr; then
  say "selftest --variants $R2QR"
  selftest_run 200 --variants "$R2QR"
  say "selftest --mutations"
  mutations_run 200 'gqptora|every planted|missed'
  say "sanitizers (several row blocks per CTA, causal)"
  { sanitize_three mma+async@128x128s3w8gqptora 2,48,333,128 --causal &
    sanitize_three mma+async@128x64s3w8gqptora 4,64,333,64 --causal & wait; } | sort
  IFS=';' read -ra r2qr_specs <<<"${R2QR_SHAPES:-2,16,2048,128|;2,16,2048,128|--regime isolated;1,32,8192,128|--causal;1,16,16384,128|;1,16,16384,128|--causal}"
  for spec in "${r2qr_specs[@]}"; do
    shape=${spec%|*}; flags=${spec#*|}
    tag=$(spec_tag "$shape" "$flags")
    say "bench $shape $flags"
    bench_r2 r2qr "$tag" 4 --shape $shape $flags --variants "cudnn,mma+async@128x128s3w8gqptor,mma+async@128x128s3w8gqptora"
  done
  for v in cudnn mma+async@128x128s3w8gqptor mma+async@128x128s3w8gqptora; do
    f="$LOGS/r2qr-ncu-$(echo "$v" | tr -c 'a-z0-9' _).csv"
    ncu_launch "$f" "$(printf '%-28s' "$v")" gpu__time_duration.sum,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio \
      --variant "$v" --shape 2,16,2048,128
  done
  pack_sessions r2qr
fi

# Issue 21, step 33 (reverted): CTA pairs (a cluster of two adjacent row
# blocks) share each K/V tile by TMA multicast, each loading half its rows
# (`m`), from the kernel copy kept with run 65 (R2M_KERNELS: run 61's, with
# the cluster barrier before exit, and Q's fragments loaded inside the loop,
# the fix run 65 found; run60-mcast/kernel.patch undoes the fix, giving the
# kernel runs 60 and 61 measured). The oracle on the `m` tiles and its teeth
# (mutations planted in 64x128s2w8k2gm too), sanitizers with an odd number
# of row blocks (the pair's second CTA past S) and with stages refilled,
# cuDNN and the tiles without `m` in one call per shape, and ncu with L2
# traffic at S512.
R2M="mma+async@64x128s2w8k2gm,mma+async@64x64s2w8k2gm,mma+async@64x64s2w4gm"
R2M_KERNELS=${R2M_KERNELS:-docs/data/2026-11-25-h100/run65-qf-fix/kernel-mcast}
if want round2m; then
  say "selftest --variants $R2M"
  selftest_run 200 --kernels "$R2M_KERNELS" --variants "$R2M"
  say "selftest --mutations"
  mutations_run 200 'gm |every planted|missed' --kernels "$R2M_KERNELS"
  say "sanitizers (odd row blocks, causal; stages refilled)"
  { sanitize_three mma+async@64x128s2w8k2gm 2,8,300,64 --causal --kernels "$R2M_KERNELS" &
    sanitize_three mma+async@64x128s2w8k2gm 1,4,1100,64 --kernels "$R2M_KERNELS" &
    sanitize_three mma+async@64x64s2w4gm 2,8,300,128 --causal --kernels "$R2M_KERNELS" & wait; } | sort
  IFS=';' read -ra r2m_specs <<<"${R2M_SHAPES:-2,8,512,64|;2,8,512,64|--regime isolated;2,8,512,64|--causal;2,8,512,64|--causal --regime isolated;2,8,2048,64|;2,16,1024,128|}"
  for spec in "${r2m_specs[@]}"; do
    shape=${spec%|*}; flags=${spec#*|}
    case $shape in
      *,128) vs="mma+async@64x64s2w4g,mma+async@64x64s2w4gm";;
      *) vs="mma+async@64x128s2w8k2g,mma+async@64x128s2w8k2gm,mma+async@64x64s2w8k2g,mma+async@64x64s2w8k2gm";;
    esac
    tag=$(spec_tag "$shape" "$flags")
    say "bench $shape $flags"
    bench_r2 r2m "$tag" 6 --kernels "$R2M_KERNELS" --shape $shape $flags --variants "cudnn,$vs"
  done
  for v in cudnn mma+async@64x128s2w8k2g mma+async@64x128s2w8k2gm; do
    f="$LOGS/r2m-ncu-$(echo "$v" | tr -c 'a-z0-9' _).csv"
    ncu_launch "$f" "$(printf '%-28s' "$v")" gpu__time_duration.sum,lts__t_bytes.sum,lts__throughput.avg.pct_of_peak_sustained_elapsed,sm__cycles_active.avg \
      --kernels "$R2M_KERNELS" --variant "$v" --shape 2,8,512,64
  done
  pack_sessions r2m
fi

# Issue 21, step 33's control (run 62): the same K/V loads by TMA without the
# cluster (one CTA loads whole tiles, no multicast), from the kernel copy in
# R2M1_KERNELS (run 65's, with the fix; run62-tma-single/kernel.patch undoes
# it, giving the kernel run 62 measured): the oracle on the three `m` tiles of
# that copy, and cuDNN, the bundled cp.async tile and the copy's TMA one at
# B2 H8 S512 D64 in three regimes, ncu on the two.
R2M1_KERNELS=${R2M1_KERNELS:-docs/data/2026-11-25-h100/run65-qf-fix/kernel-tma}
if want round2m1; then
  say "selftest --variants $R2M (single-CTA TMA)"
  selftest_run 200 --kernels "$R2M1_KERNELS" --variants "$R2M"
  for flags in "" "--regime isolated" "--causal"; do
    say "bench 2,8,512,64 $flags"
    bench_r2 r2m1 "$(spec_tag 2,8,512,64 "$flags")" 4 --kernels "$R2M1_KERNELS" --shape 2,8,512,64 $flags \
      --variants "cudnn,bundled:mma+async@64x128s2w8k2g,mma+async@64x128s2w8k2gm"
  done
  for v in bundled:mma+async@64x128s2w8k2g mma+async@64x128s2w8k2gm; do
    f="$LOGS/r2m1-ncu-$(echo "$v" | tr -c 'a-z0-9' _).csv"
    ncu_launch "$f" "$(printf '%-34s' "$v")" gpu__time_duration.sum \
      --kernels "$R2M1_KERNELS" --variant "$v" --shape 2,8,512,64
  done
  pack_sessions r2m1
fi

# Issue 21, step 34 (reverted): both split groups merge and store half of D
# each, from the kernel copy kept with run 63 (R2B_KERNELS). The oracle on
# split tiles of every form (mma and wgmma, 16 and 32 rows a warp, D=64 and
# 128) and the planted merge bug, sanitizers on a split tile with partial
# tiles, and the bundled kernel (`bundled:` rows, the merge by group 0 alone)
# raced against it in one call per shape; ncu on both at S512.
R2B="mma+async@64x128s2w8k2g,mma+async@64x64s2w8k2g,mma+async@64x64s2w8k2,mma+async@32x64s2w4k2,mma+async@128x64s2w8k2,mma+async@64x32s2w16k4g"
R2B_KERNELS=${R2B_KERNELS:-docs/data/2026-11-25-h100/run63-merge-both/kernel}
if want round2b; then
  say "selftest --variants $R2B"
  selftest_run 250 --kernels "$R2B_KERNELS" --variants "$R2B"
  say "selftest --mutations"
  mutations_run 200 'mutmerge|every planted' --kernels "$R2B_KERNELS"
  say "sanitizers (split tiles, partial row and key tiles)"
  { sanitize_three mma+async@64x128s2w8k2g 2,8,333,64 --causal --kernels "$R2B_KERNELS" &
    sanitize_three mma+async@64x64s2w8k2 1,4,333,128 --kernels "$R2B_KERNELS" & wait; } | sort
  IFS=';' read -ra r2b_specs <<<"${R2B_SHAPES:-2,8,512,64|;2,8,512,64|--regime isolated;2,8,512,64|--causal;2,8,512,64|--causal --regime isolated;2,8,2048,64|}"
  for spec in "${r2b_specs[@]}"; do
    shape=${spec%|*}; flags=${spec#*|}
    tag=$(spec_tag "$shape" "$flags")
    say "bench $shape $flags"
    bench_r2 r2b "$tag" 4 --kernels "$R2B_KERNELS" --shape $shape $flags \
      --variants "cudnn,mma+async@64x128s2w8k2g,bundled:mma+async@64x128s2w8k2g"
  done
  for v in mma+async@64x128s2w8k2g bundled:mma+async@64x128s2w8k2g; do
    f="$LOGS/r2b-ncu-$(echo "$v" | tr -c 'a-z0-9' _).csv"
    ncu_launch "$f" "$(printf '%-34s' "$v")" gpu__time_duration.sum \
      --kernels "$R2B_KERNELS" --variant "$v" --shape 2,8,512,64
  done
  pack_sessions r2b
fi

# Issue 21, step 36: split groups apart (i), each loading its rows of a stage
# and waiting at its own named barrier, staggered at the first Q·Kᵀ. The
# oracle on i tiles of every form (wgmma and mma.sync, two and four groups,
# 16 rows a warp and 32), its teeth (the merge bug planted in an i tile),
# sanitizers at partial tiles, cuDNN and the tiles with and without i in one
# call per regime at S512 and S2048, ncu at S512, and tune at S512.
R2I_TILES=${R2I_TILES:-64x128s2w8k2g,64x128s2w8k2gi,64x64s2w8k2g,64x64s2w8k2gi,64x64s2w16k4gi}
R2I_CHECK="mma+async@64x128s2w8k2gi,mma+async@64x64s2w8k2gi,mma+async@64x64s2w16k4gi,mma+async@64x64s2w8k2i,mma+async@32x64s2w4k2i"
if want round2i; then
  list=""; for t in ${R2I_TILES//,/ }; do list="$list,mma+async@$t"; done; list=${list#,}
  say "selftest --variants $R2I_CHECK"
  selftest_run 240 --variants "$R2I_CHECK"
  bench_specs r2i 7 "2,8,512,64|;2,8,512,64|--regime isolated;2,8,512,64|--causal;2,8,512,64|--causal --regime isolated;2,8,2048,64|;2,8,2048,64|--causal" \
    "cudnn,$list" "cudnn,$list"
  say "sanitizers (partial row and key tiles, causal, a group with no tiles, D=64 and D=128)"
  { sanitize_three mma+async@64x128s2w8k2gi 2,8,333,64 --causal &
    sanitize_three mma+async@64x64s2w16k4gi 1,4,333,64 &
    sanitize_three mma+async@64x64s2w8k2i 1,4,333,128 --causal & wait; } | sort
  for causal in "" --causal; do
    for v in cudnn mma+async@64x128s2w8k2g mma+async@64x128s2w8k2gi; do
      f="$LOGS/r2i-ncu$causal-$(echo "$v" | tr -c 'a-z0-9' _).csv"
      ncu_launch "$f" "$(printf '%-26s %s' "$v" "$causal")" gpu__time_duration.sum,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active \
        --variant "$v" --shape 2,8,512,64 $causal
    done
  done
  pack_sessions r2i
  for causal in "" --causal; do
    say "tune mma+async at 2,8,512,64 $causal"
    timeout -k 5 200 "$BIN" tune --shape 2,8,512,64 $causal --max-seconds 0.5 2>"$LOGS/r2i-tune$causal.err" \
      | tee "$LOGS/r2i-tune$causal.log" | head -7 | sed 's/^/  /'
  done
  say "selftest --mutations"
  mutations_run 200 'mutmerge|every planted|missed'
fi

# Issue 21, steps 37 and 38 (both reverted), from kernel copies built from
# their patches (the GPU machine has no git; build them here and carry
# exp-kernels):
#   for x in streamk:run80-streamk pairm:run82-pair-mcast; do
#     d=exp-kernels/${x%%:*}; mkdir -p $d && cp kernels/attention.* $d/ &&
#     patch -p2 -d $d <docs/data/2026-11-25-h100/${x#*:}/kernel.patch; done
# round2sk (step 37, stream-K tails, b): the oracle on b tiles (blocks cut at
# S333, S2049 and S4097, with and without whole rounds before), its teeth
# (the merge bug planted in a b tile, rising inputs), sanitizers where blocks
# are cut, cuDNN and the tiles with and without b in one call per shape and
# regime, ncu at S16384 D128 (time, tensor pipe, SM active cycles mean and
# max: the idle tail).
# round2pm (step 38, CTA pairs sharing K/V by TMA multicast, m): the oracle
# on m tiles of each form, sanitizers at odd row-block counts (causal too),
# the races, and ncu at S16384 D128 with the L2 read sectors from the SMs.
R2SK_KERNELS=${R2SK_KERNELS:-exp-kernels/streamk}
R2SK_CHECK=${R2SK_CHECK:-mma+async@128x128s3w8gqptorab,mma+async@128x64s3w8gqptorb}
R2SK_SPECS=${R2SK_SPECS:-"1,16,16384,128|;1,16,16384,128|--regime isolated;2,16,2048,128|;2,16,2048,128|--regime isolated;1,16,16384,128|--causal;4,16,4096,64|"}
if want round2sk && [ ! -f "$R2SK_KERNELS/attention.cu" ]; then
  say "round2sk: no $R2SK_KERNELS/attention.cu (build it from its patch, above)"
elif want round2sk; then
  K=$R2SK_KERNELS
  say "selftest --kernels $K --variants $R2SK_CHECK"
  selftest_run 240 --kernels "$K" --variants "$R2SK_CHECK"
  say "selftest --kernels $K --mutations --inputs rising"
  mutations_run 150 'mutmerge|every planted|missed' --kernels "$K" --inputs rising
  say "sanitizers (blocks cut over CTAs, D=64 and D=128)"
  { sanitize_three mma+async@128x128s3w8gqptorab 2,48,333,128 --kernels "$K" &
    sanitize_three mma+async@128x64s3w8gqptorb 4,64,333,64 --kernels "$K" & wait; } | sort
  list="cudnn,mma+async@128x128s3w8gqptora,mma+async@128x128s3w8gqptorab"
  bench_specs r2sk 6 "$R2SK_SPECS" "$list" "$list,mma+async@192x128s3w12gqptor" --kernels "$K"
  ncu_variants r2sk-ncu gpu__time_duration.sum,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active,sm__cycles_active.avg,sm__cycles_active.max \
    "${list//,/ }" --kernels "$K" --shape 1,16,16384,128
  pack_sessions r2sk
fi
R2PM_KERNELS=${R2PM_KERNELS:-exp-kernels/pairm}
R2PM_CHECK=${R2PM_CHECK:-mma+async@128x128s3w8gqptoram,mma+async@128x64s3w8gqptorm,mma+async@192x128s3w12gqptorm}
R2PM_SPECS=${R2PM_SPECS:-"1,16,16384,128|;1,16,16384,128|--regime isolated;2,16,2048,128|;2,16,2048,128|--regime isolated;1,16,16384,128|--causal;4,16,4096,64|;4,16,4096,64|--regime isolated"}
if want round2pm && [ ! -f "$R2PM_KERNELS/attention.cu" ]; then
  say "round2pm: no $R2PM_KERNELS/attention.cu (build it from its patch, above)"
elif want round2pm; then
  K=$R2PM_KERNELS
  say "selftest --kernels $K --variants $R2PM_CHECK"
  selftest_run 240 --kernels "$K" --variants "$R2PM_CHECK"
  say "sanitizers (odd row-block counts, D=64 and D=128, causal too)"
  { sanitize_three mma+async@128x128s3w8gqptoram 2,48,333,128 --kernels "$K" &
    sanitize_three mma+async@192x128s3w12gqptorm 4,64,333,64 --kernels "$K" &
    sanitize_three mma+async@128x128s3w8gqptoram 1,9,333,64 --causal --kernels "$K" & wait; } | sort
  list="cudnn,mma+async@128x128s3w8gqptora,mma+async@128x128s3w8gqptoram"
  bench_specs r2pm 5 "$R2PM_SPECS" "$list" "cudnn,mma+async@192x128s3w12gqptor,mma+async@192x128s3w12gqptorm" --kernels "$K"
  ncu_variants r2pm-ncu gpu__time_duration.sum,sm__cycles_active.max,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sector_hit_rate.pct \
    "${list//,/ }" --kernels "$K" --shape 1,16,16384,128
  pack_sessions r2pm
fi

# Issue 21, step 39 (exponentials first, e). round2efc, the checks: the
# oracle on e tiles at D = 64 and 128; the planted bugs with rising inputs
# (mutexp: a tile keeping unchecked exponentials; mutrescale in an e tile:
# the recomputed path's rescale); the sanitizers; and the same inputs through
# the tile with and without e, whose errors must agree to every digit at
# D = 128 (the same P, bit for bit; at D = 64 e also moves the row sums to
# FADD). round2ef, the timing: cuDNN and
# the tile with and without e in one call per shape and regime; at S16384
# D128 longer runs with NVML at 50 Hz (scripts/energy.py: power, clock and
# joules a launch from the samples); ncu time, instructions and tensor pipe.
R2EF_LIST=${R2EF_LIST:-cudnn,mma+async@128x128s3w8gqptora,mma+async@128x128s3w8gqptorae}
R2EF_SPECS=${R2EF_SPECS:-"2,16,2048,128|;2,16,2048,128|--regime isolated;1,32,8192,128|--causal;1,16,16384,128|--causal;4,16,4096,64|"}
if want round2efc; then
  say "selftest --variants mma+async@128x128s3w8gqptorae"
  selftest_run 300 --variants mma+async@128x128s3w8gqptorae
  say "selftest --mutations --inputs rising"
  mutations_run 200 'mutexp|mutrescale.*gqptorae|every planted|missed' --inputs rising
  say "sanitizers (partial tiles, several rounds, causal)"
  { sanitize_three mma+async@128x128s3w8gqptorae 2,48,333,128 --inputs rising &
    sanitize_three mma+async@128x128s3w8gqptorae 1,9,333,128 --causal &
    sanitize_three mma+async@128x128s3w8gqptorae 4,64,333,64 & wait; } | sort
  say "the same inputs with and without e (and with 64-key tiles): max and relative L2 errors"
  for spec in "1,16,4096,128|" "1,16,4096,128|--causal" "2,48,333,128|" "4,16,1024,64|"; do
    for inputs in rising uniform outliers; do
      same_errors "$spec" "${spec%|*}" "${spec#*|}" $inputs \
        mma+async@128x128s3w8gqptora,mma+async@128x128s3w8gqptorae,mma+async@128x64s3w8gqptor
    done
  done
fi
if want round2ef; then
  list=$R2EF_LIST
  for flags in "" "--regime isolated"; do
    tag=energy$(spec_tag "" "$flags")
    say "bench 1,16,16384,128 $flags (3 s each, NVML at 50 Hz)"
    timeout -k 5 150 "$BIN" bench --shape 1,16,16384,128 $flags --variants "$list" --warm-seconds 1 --max-seconds 3 \
      --telemetry-hz 50 --record "$OUT/r2ef-$tag.jsonl" 2>&1 | tee "$LOGS/r2ef-$tag.log" | tail -n +4 | head -5 | sed 's/^/  /'
    python3 scripts/energy.py "$OUT/r2ef-$tag.jsonl" 2199023255552 | sed 's/^/  /'
  done
  bench_specs r2ef 5 "$R2EF_SPECS" "$list" "cudnn,mma+async@192x128s3w12gqptor,mma+async@128x128s3w8gqptora,mma+async@128x128s3w8gqptorae"
  ncu_variants r2ef-ncu gpu__time_duration.sum,smsp__inst_executed.sum,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active,smsp__inst_executed_pipe_xu.sum \
    "${list//,/ }" --shape 1,16,16384,128
  pack_sessions r2ef
fi

# Issue 21, step 36: racecheck on i tiles of the bundled kernel and of each
# exp-kernels/ copy (R2IR_VARIANTS at R2IR_SHAPES, one line each), then the
# copies raced against the bundled i tile at S512.
R2IR_VARIANTS=${R2IR_VARIANTS:-mma+async@64x128s2w8k2g mma+async@64x128s2w8k2gi mma+async@64x64s2w8k2i}
if want round2irace; then
  { for k in bundled exp-kernels/*/; do
      k=${k%/}; [ "$k" = bundled ] || [ -f "$k/attention.cu" ] || continue
      for v in $R2IR_VARIANTS; do
        shape=2,8,333,64; [[ "$v" == *k2i ]] && shape=1,4,333,128
        sanitize_run racecheck "$v" $shape --causal $([ "$k" = bundled ] || echo "--kernels $k") &
      done
    done
    wait; } | sort
  list="cudnn,mma+async@64x128s2w8k2gi"
  for k in exp-kernels/*/; do list="$list,${k%/}:mma+async@64x128s2w8k2gi"; done
  for flags in "" "--regime isolated"; do
    say "bench 2,8,512,64 $flags"
    bench_r2 r2ir "$(spec_tag 2,8,512,64 "$flags")" 6 --shape 2,8,512,64 $flags --variants "$list"
  done
  pack_sessions r2ir
fi

# Issue 21, step 35 (reverted): pair tiles (d), a row block's K/V tiles split
# over a 2-CTA cluster and merged through distributed shared memory, from the
# kernel kept as a patch against bf4bf3c (run 70). The GPU machine has no git:
# build the copy here and carry it,
#   mkdir -p exp-kernels/pair && for f in attention.cu attention.toml; do
#     git show bf4bf3c:kernels/$f >exp-kernels/pair/$f; done
#   patch -p2 -d exp-kernels/pair <docs/data/2026-11-25-h100/run70-pair/kernel.patch
# then R2D_KERNELS=exp-kernels/pair (the default when that folder exists).
# The oracle on them (odd tile counts at S333 and S4097, a causal rank with
# no tiles at S512), cuDNN, the bundled kernel's S512 pick (`bundled:`), the
# same tile without the pair and the d tiles in one call per regime,
# sanitizers at partial tiles, ncu on each, and the oracle's teeth (the merge
# bug planted in a d tile). R2D_EXTRA adds variants of other copies
# (exp-kernels/NAME:VARIANT; run 71's come from its patches); R2D_ONLY_TIMES=1
# keeps only the races and ncu.
R2D_TILES=${R2D_TILES:-128x128s2w8g,128x128s2w8gd,128x64s2w8gd,128x128s3w8gd}
if want round2d; then
  R2D_KERNELS=${R2D_KERNELS:-exp-kernels/pair}
  [ -f "$R2D_KERNELS/attention.cu" ] || say "  no $R2D_KERNELS/attention.cu: build it from bf4bf3c and the patch (see above)"
  list=""; for t in ${R2D_TILES//,/ }; do list="$list,mma+async@$t"; done; list=${list#,}
  if [ -z "${R2D_ONLY_TIMES:-}" ]; then
    say "selftest --variants (d tiles)"
    selftest_run 240 --kernels "$R2D_KERNELS" --variants "$(echo "$list" | tr ',' '\n' | grep 'gd$' | paste -sd,)"
  fi
  list="bundled:mma+async@64x128s2w8k2g,$list${R2D_EXTRA:+,$R2D_EXTRA}"
  for flags in "" "--regime isolated" "--causal" "--causal --regime isolated"; do
    say "bench 2,8,512,64 $flags"
    bench_r2 r2d "$(spec_tag 2,8,512,64 "$flags")" 7 --kernels "$R2D_KERNELS" --shape 2,8,512,64 $flags \
      --variants "cudnn,$list"
  done
  if [ -z "${R2D_ONLY_TIMES:-}" ]; then
    say "sanitizers (partial row and key tiles, causal, D=64 and D=128)"
    { sanitize_three mma+async@128x128s2w8gd 2,8,333,64 --causal --kernels "$R2D_KERNELS" &
      sanitize_three mma+async@128x128s3w8gd 2,4,333,64 --kernels "$R2D_KERNELS" &
      sanitize_three mma+async@128x64s2w8gd 1,4,333,128 --causal --kernels "$R2D_KERNELS" & wait; } | sort
  fi
  for v in cudnn ${list//,/ }; do
    f="$LOGS/r2d-ncu-$(echo "$v" | tr -c 'a-z0-9' _).csv"
    k=$R2D_KERNELS
    case "$v" in bundled:*) k=""; v=${v#bundled:} ;; */*:*) k=${v%%:*}; v=${v#*:} ;; esac
    ncu_launch "$f" "$(printf '%-24s %s' "$v" "${k:-bundled}")" gpu__time_duration.sum,lts__t_bytes.sum,sm__cycles_active.avg \
      ${k:+--kernels $k} --variant "$v" --shape 2,8,512,64
  done
  pack_sessions r2d
  if [ -z "${R2D_ONLY_TIMES:-}" ]; then
    say "selftest --mutations"
    timeout -k 5 200 "$BIN" selftest --kernels "$R2D_KERNELS" --mutations >"$LOGS/mutations.txt" 2>&1; echo "  rc=$?"
    grep -E 'gd|every planted|missed' "$LOGS/mutations.txt" | head -12 | sed 's/^/  /'
  fi
fi

# Issue 21, B2 H8 S512 D64: tiles outside the tune list against the one tune
# picks, no kernel change (S512_TILES). The oracle on them, cuDNN and the
# tiles in one call per regime, and ncu on each.
S512_TILES=${S512_TILES:-64x128s2w8k2g,64x128s3w8k2g,64x128s3w4g,64x64s3w8k2g}
if want s512tiles; then
  list=""; for t in ${S512_TILES//,/ }; do list="$list,mma+async@$t"; done; list=${list#,}
  say "selftest --variants $list"
  selftest_run 200 --variants "$list"
  for flags in "" "--regime isolated" "--causal" "--causal --regime isolated"; do
    say "bench 2,8,512,64 $flags"
    bench_r2 s512 "$(spec_tag 2,8,512,64 "$flags")" 6 --shape 2,8,512,64 $flags --variants "cudnn,$list"
  done
  for v in cudnn ${list//,/ }; do
    f="$LOGS/s512-ncu-$(echo "$v" | tr -c 'a-z0-9' _).csv"
    ncu_launch "$f" "$(printf '%-28s' "$v")" gpu__time_duration.sum \
      --variant "$v" --shape 2,8,512,64
  done
  pack_sessions s512
fi

# Issue 21, steps 27 and 28, changes to code every mma tile runs (27: O
# stored 16 bytes a lane after a quad transpose; 28: wgmma descriptors as a
# base plus constants). The oracle on tiles of every form (16 and 32 rows a
# warp, split, wgmma, TMA with rows before 0, three warpgroups), sanitizers,
# and the kernel before the change (exp-kernels/prev) raced in one call per
# shape; ncu on both with the stalls the steps aim at and the tensor pipe.
R2E="mma,mma+async@32x64s2w4k2,mma+async@64x128s2w8k2g,mma+async@64x64s2w4g,mma+async@64x128s2w4g,mma+async@128x128s3w8gqptor,mma+async@192x128s3w12gqpto,mma+async@192x128s3w12gqptor"
if want round2e; then
  say "selftest --variants $R2E"
  selftest_run 200 --variants "$R2E"
  say "sanitizers (partial row blocks, causal rows before 0)"
  { sanitize_three mma+async@64x128s2w8k2g 2,8,333,64 --causal &
    sanitize_three mma+async@128x128s3w8gqptor 2,48,333,128 --causal & wait; } | sort
  IFS=';' read -ra r2e_specs <<<"${R2E_SHAPES:-2,8,512,64||64x128s2w8k2g;2,8,512,64|--causal|64x128s2w8k2g;2,8,512,64|--regime isolated|64x128s2w8k2g;2,16,2048,128||128x128s3w8gqptor;2,16,2048,128|--regime isolated|128x128s3w8gqptor;4,16,4096,64||192x128s3w12gqpto;1,16,16384,128||128x128s3w8gqptor}"
  for spec in "${r2e_specs[@]}"; do
    IFS='|' read -r shape flags tile <<<"$spec"
    list="cudnn,mma+async@$tile"
    [ -d exp-kernels/prev ] && list="$list,exp-kernels/prev:mma+async@$tile"
    tag=$(spec_tag "$shape" "$flags")
    say "bench $shape $flags"
    bench_r2 r2e "$tag" 4 --shape $shape $flags --variants "$list"
  done
  for spec in "2,8,512,64|64x128s2w8k2g" "2,16,2048,128|128x128s3w8gqptor"; do
    IFS='|' read -r shape tile <<<"$spec"
    for k in "" exp-kernels/prev; do
      [ -n "$k" ] && [ ! -d "$k" ] && continue
      f="$LOGS/r2e-ncu-${shape//,/x}-${k:+prev}.csv"
      ncu_launch "$f" "$(printf '%-16s %-24s %s' "$shape" "$tile" "${k:-this}")" gpu__time_duration.sum,smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_wait_per_issue_active.ratio,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active \
        ${k:+--kernels $k} --variant "mma+async@$tile" --shape $shape
    done
  done
  pack_sessions r2e
fi

# Issue 21, step 26 (reverted): 176-key tiles at D=128 (x176, two stages,
# ping-pong, as FlashAttention-3 runs there), from the kernel copy kept with
# run 44 (R2X_KERNELS). The oracle (and its teeth, R2X_MUTATIONS=1),
# sanitizers at partial key tiles, and cuDNN, the bundled kernel's 128-key
# tile (`bundled:`) and the x176 tiles in one call per shape; with
# exp-kernels/prev (run 43's joint K/V hand-over: the copy with KV_BARS 0) its
# x176r as well. ncu and the tensor pipe at B2 H16 S2048 D128.
R2X="mma+async@128x176s2w8gqpto,mma+async@128x176s2w8gqptor"
R2X_KERNELS=${R2X_KERNELS:-docs/data/2026-11-24-h100/run44-x176-kv/kernel}
if want round2x; then
  say "selftest --variants $R2X"
  selftest_run 200 --kernels "$R2X_KERNELS" --variants "$R2X"
  if [ -n "${R2X_MUTATIONS:-}" ]; then
    say "selftest --mutations"
    mutations_run 200 '128x176|every planted|missed' --kernels "$R2X_KERNELS"
  fi
  say "sanitizers on the x176 tiles (partial key tiles, causal, several row blocks per CTA)"
  { sanitize_three mma+async@128x176s2w8gqptor 2,48,333,128 --causal --kernels "$R2X_KERNELS" &
    sanitize_three mma+async@128x176s2w8gqpto 2,16,333,128 --kernels "$R2X_KERNELS" &
    sanitize_three mma+async@128x176s2w8gqptor 4,64,333,64 --kernels "$R2X_KERNELS" & wait; } | sort
  IFS=';' read -ra r2x_specs <<<"${R2X_SHAPES:-2,16,2048,128|;2,16,2048,128|--regime isolated;1,16,16384,128|;1,16,16384,128|--regime isolated;1,32,8192,128|--causal;1,16,16384,128|--causal;4,16,4096,64|}"
  for spec in "${r2x_specs[@]}"; do
    shape=${spec%|*}; flags=${spec#*|}
    case $shape in *,128) old="mma+async@128x128s3w8gqptor";; *) old="mma+async@192x128s3w12gqpto";; esac
    list="cudnn,bundled:$old,$R2X"
    [ -d exp-kernels/prev ] && list="$list,exp-kernels/prev:mma+async@128x176s2w8gqptor"
    tag=$(spec_tag "$shape" "$flags")
    say "bench $shape $flags"
    bench_r2 r2x "$tag" 6 --kernels "$R2X_KERNELS" --shape $shape $flags --variants "$list"
  done
  for v in cudnn bundled:mma+async@128x128s3w8gqptor mma+async@128x176s2w8gqptor mma+async@128x176s2w8gqpto; do
    f="$LOGS/r2x-ncu-$(echo "$v" | tr -c 'a-z0-9' _).csv"
    ncu_launch "$f" "$(printf '%-28s' "$v")" gpu__time_duration.sum,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active \
      --kernels "$R2X_KERNELS" --variant "$v" --shape 2,16,2048,128
  done
  pack_sessions r2x
fi
