#!/usr/bin/env bash
# One call on the GPU machine, printing each result as it lands (a killed call
# still shows what finished). Full logs in $OUT/logs.tgz, sessions in $OUT.
#   doctor · live mode in a 120x40 pseudo-terminal (x starts the A/B race,
#   SIGTERM ends it) · selftest · compute-sanitizer memcheck + racecheck for
#   every variant (parallel) · bench S=512 with CUPTI and with CUDA events ·
#   telemetry on/off · bench causal and S=2048 · ab scalar vs full, A/A.
#   sdpa: bench/sdpa_compare.py (PyTorch SDPA backends vs attnscope bench).
#   fault: live with the test-only fault variant and a worker crash (recorded).
#   counters: `gates` for every variant, an unknown metric, the ncu crosscheck.
#   tour: a scripted live session (every toggle combination, a bookmark, the
#   A/B race) recorded to $OUT/tour.jsonl, the session shipped in sessions/.
# Usage (repo root, binary carried in .carry/):
#   bash scripts/device-check.sh [all | SECTION...]   sections: live selftest
#   sanitize bench cold telemetry ab fault counters sdpa tour   (all = every section but tour)
set -u
SECTIONS=" ${*:-all} "
want() { [[ "$SECTIONS" == *" all "* && "$1" != tour ]] || [[ "$SECTIONS" == *" $1 "* ]]; }
BIN=${BIN:-.carry/attnscope}
OUT=${OUT:-/tmp/attnscope-out}
LOGS=$(mktemp -d)
mkdir -p "$OUT"
export PATH="/usr/local/cuda/bin:$PATH"
T0=$(date +%s)
say() { echo "[$(( $(date +%s) - T0 ))s] $*"; }
trap 'tar czf "$OUT/logs.tgz" -C "$LOGS" . 2>/dev/null' EXIT

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
  sed 's/^/  /' "$LOGS/live-summary.log" | grep -vE '^\s+(l1tex|sm__|smsp|dram)' | head -40
  grep -o '"type":"counters"[^{]*\|"collection_ms":[0-9.]*\|"setup_ms":[0-9.]*' "$OUT/live.jsonl" | tr '\n' ' '; echo
fi

if want selftest; then
say "selftest"; "$BIN" selftest >"$LOGS/selftest.log" 2>&1; echo "  rc=$?"
grep '^FAIL' "$LOGS/selftest.log" | head -20; tail -1 "$LOGS/selftest.log" | sed 's/^/  /'
fi

if want sanitize; then
say "sanitizers (parallel)"
for v in scalar wmma pv wmma+pv async wmma+async pv+async wmma+pv+async; do
  for tool in memcheck racecheck; do
    ( timeout -k 5 240 compute-sanitizer --tool "$tool" --error-exitcode 9 "$BIN" bench --shape 2,8,512,64 \
        --variants "$v" --launches 2 --timer events --telemetry-hz 0 >"$LOGS/san-$tool-$v.log" 2>&1
      echo "  $tool $v rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$LOGS/san-$tool-$v.log" | tail -1)" ) &
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

if want counters; then
say "gates, every variant (counters with L2 emptied before each pass)"
for v in scalar wmma pv wmma+pv async wmma+async pv+async wmma+pv+async; do
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
say "gates table, wmma+pv+async"; "$BIN" gates --variant wmma+pv+async --max-seconds 1; echo "  rc=$?"
say "an unknown metric in --metrics: refused, the rest collected"
printf '[[metric]]\nname = "sm__no_such_metric.sum"\nunit = ""\ndisplay = "bogus"\n' >"$LOGS/bogus.toml"
"$BIN" gates --variant wmma --metrics "$LOGS/bogus.toml" --max-seconds 0.5 2>&1 | grep -E "refused|Tensor|passes" | head -5
say "ncu crosscheck"
OUT="$LOGS/xc" RANGES="${RANGES:-auto}" bash scripts/ncu-crosscheck.sh scalar wmma+pv+async 2>&1 | tee "$LOGS/crosscheck.log"
fi

if want sdpa; then
say "attnscope against PyTorch SDPA (bench/sdpa_compare.py)"
python3 bench/sdpa_compare.py --bin "$BIN" --json "$OUT/sdpa.json" 2>&1 | tee "$LOGS/sdpa.log" | tail -12
fi

# A scripted tour in live mode: scalar, then a Gray-code walk over the three
# toggles (w p w c w p w) so every combination is built, checked and timed,
# counters (g) for every variant, a bookmark, then the A/B race (scalar vs
# wmma+pv+async).
if want tour && command -v script >/dev/null; then
  say "tour (live, pty 120x40)"
  ( sleep 4; printf g; sleep 2; for k in w p w c w p w; do printf "$k"; sleep 2; printf g; sleep 2; done
    printf 'm'; sleep 1; printf 'x'; sleep 60 ) \
    | TERM=xterm-256color script -qfec \
      "stty cols 120 rows 40; exec $BIN live --variant scalar --record $OUT/tour.jsonl --ab-seconds 8" /dev/null >"$LOGS/tour-tty.log" 2>&1 &
  sleep 50
  pkill -TERM -x attnscope; sleep 3
  pkill -KILL -x attnscope && say "  tour had to be SIGKILLed"
  pkill -f 'sleep 60'; wait 2>/dev/null
  say "  terminal restored: $(grep -c $'\e\[?1049l' "$LOGS/tour-tty.log")"
  "$BIN" replay "$OUT/tour.jsonl" --summary | grep -vE '^\s+(l1tex|sm__|smsp|dram)' | head -40
fi
say "done"
