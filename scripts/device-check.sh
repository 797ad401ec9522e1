#!/usr/bin/env bash
# One call on the GPU machine: doctor, selftest, compute-sanitizer memcheck and
# racecheck for every variant at the mission shape (in parallel), bench at
# S=512 (recorded), S=512 causal and S=2048, and a live-mode smoke test under
# a pseudo-terminal ended by SIGTERM. Full logs in $OUT/logs.tgz, sessions in
# $OUT; a short table last.
# Usage (repo root, binary carried in .carry/): bash scripts/device-check.sh
set -u
BIN=${BIN:-.carry/attnscope}
OUT=${OUT:-/tmp/attnscope-out}
LOGS=$(mktemp -d)
mkdir -p "$OUT"
export PATH="/usr/local/cuda/bin:$PATH"
summary=()
step() { # name, command...
  local name=$1; shift
  local t0=$(date +%s)
  "$@" >"$LOGS/$name.log" 2>&1
  local rc=$?
  summary+=("$(printf '%-22s rc=%-3s %4ss' "$name" "$rc" "$(( $(date +%s) - t0 ))")")
}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu --format=csv >"$LOGS/nvidia-smi.log" 2>&1
step doctor "$BIN" doctor
step selftest "$BIN" selftest
step bench-s512 "$BIN" bench --shape 2,8,512,64 --max-seconds 3 --record "$OUT/bench-s512.jsonl"
step bench-s512-causal "$BIN" bench --shape 2,8,512,64 --causal --max-seconds 3
step bench-s2048 "$BIN" bench --shape 2,8,2048,64 --max-seconds 3
t0=$(date +%s)
for v in scalar wmma pv wmma+pv async wmma+async pv+async wmma+pv+async; do
  for tool in memcheck racecheck; do
    ( timeout 300 compute-sanitizer --tool "$tool" --error-exitcode 9 "$BIN" bench --shape 2,8,512,64 \
        --variants "$v" --launches 2 >"$LOGS/san-$tool-$v.log" 2>&1
      echo "$tool $v rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$LOGS/san-$tool-$v.log" | tail -1)" >"$LOGS/san-$tool-$v.sum" ) &
  done
done
wait
cat "$LOGS"/san-*.sum | sort -k2 >"$LOGS/sanitizer.log"
summary+=("$(printf '%-22s        %4ss' sanitizers "$(( $(date +%s) - t0 ))")")
# Live mode in a pseudo-terminal for 12 s, then SIGTERM: the terminal must be
# restored and the recording must replay.
if command -v script >/dev/null; then
  step live-smoke env TERM=xterm-256color script -qfec \
    "timeout -s TERM 12 $BIN live --record $OUT/live.jsonl" /dev/null
  step live-summary "$BIN" replay "$OUT/live.jsonl" --summary
else
  summary+=("live-smoke             skipped: no script(1)")
fi
tar czf "$OUT/logs.tgz" -C "$LOGS" .
echo "==== nvidia-smi"; cat "$LOGS/nvidia-smi.log"
echo "==== doctor"; cat "$LOGS/doctor.log"
echo "==== selftest"; grep -c '^ok' "$LOGS/selftest.log" | sed 's/^/ok lines: /'; grep '^FAIL' "$LOGS/selftest.log" | head -20; tail -1 "$LOGS/selftest.log"
echo "==== sanitizer (rc 0 = no errors and correct)"; cat "$LOGS/sanitizer.log"
echo "==== live smoke (replay --summary of what it recorded)"; head -12 "$LOGS/live-summary.log" 2>/dev/null
echo "==== bench S=512 causal"; cat "$LOGS/bench-s512-causal.log"
echo "==== bench S=2048"; cat "$LOGS/bench-s2048.log"
echo "==== bench S=512"; cat "$LOGS/bench-s512.log"
echo "==== steps"; printf '%s\n' "${summary[@]}"
