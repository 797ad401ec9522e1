#!/usr/bin/env bash
# One call on the GPU machine: doctor, selftest, compute-sanitizer memcheck and
# racecheck for every variant at the mission shape, bench at S=512 and S=2048,
# and a recorded session. Logs under $OUT; a short table last.
# Usage (from the repo root, binary carried in .carry/): bash scripts/device-check.sh
set -u
BIN=${BIN:-.carry/attnscope}
OUT=${OUT:-/tmp/attnscope-out}
mkdir -p "$OUT"
export PATH="/usr/local/cuda/bin:$PATH"
summary=()
step() { # name, command...
  local name=$1; shift
  local t0=$(date +%s)
  "$@" >"$OUT/$name.log" 2>&1
  local rc=$?
  summary+=("$(printf '%-28s rc=%-3s %4ss' "$name" "$rc" "$(( $(date +%s) - t0 ))")")
  return $rc
}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv >"$OUT/nvidia-smi.log" 2>&1
step doctor "$BIN" doctor
step selftest "$BIN" selftest
step bench-s512 "$BIN" bench --shape 2,8,512,64 --max-seconds 3 --record "$OUT/session.jsonl"
step bench-s2048 "$BIN" bench --shape 2,8,2048,64 --max-seconds 3
step bench-s512-causal "$BIN" bench --shape 2,8,512,64 --causal --max-seconds 2
: >"$OUT/sanitizer.log"
for v in scalar wmma pv wmma+pv async wmma+async pv+async wmma+pv+async; do
  for tool in memcheck racecheck; do
    timeout 120 compute-sanitizer --tool "$tool" --error-exitcode 9 "$BIN" bench --shape 2,8,512,64 --variants "$v" --max-seconds 0.5 >"$OUT/san.tmp" 2>&1
    rc=$?
    echo "$tool $v rc=$rc $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/san.tmp" | tail -1)" >>"$OUT/sanitizer.log"
  done
done
echo "==== nvidia-smi"; cat "$OUT/nvidia-smi.log"
echo "==== doctor"; cat "$OUT/doctor.log"
echo "==== selftest (tail)"; tail -3 "$OUT/selftest.log"; grep -c '^FAIL' "$OUT/selftest.log" | sed 's/^/selftest FAIL lines: /'
grep '^FAIL' "$OUT/selftest.log" | head -20
echo "==== sanitizer"; cat "$OUT/sanitizer.log"
echo "==== bench S=512"; cat "$OUT/bench-s512.log"
echo "==== bench S=512 causal"; cat "$OUT/bench-s512-causal.log"
echo "==== bench S=2048"; cat "$OUT/bench-s2048.log"
echo "==== steps"; printf '%s\n' "${summary[@]}"
