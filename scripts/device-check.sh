#!/usr/bin/env bash
# One call on the GPU machine: a live-mode smoke test in a pseudo-terminal
# ended by SIGTERM, selftest, compute-sanitizer memcheck and racecheck for every
# variant at the mission shape (in parallel), bench at S=512 (recorded), S=512
# causal and S=2048. Each result is printed as it lands (a killed call still
# shows what finished); full logs in $OUT/logs.tgz, sessions in $OUT.
# Usage (repo root, binary carried in .carry/): bash scripts/device-check.sh
set -u
BIN=${BIN:-.carry/attnscope}
OUT=${OUT:-/tmp/attnscope-out}
LOGS=$(mktemp -d)
mkdir -p "$OUT"
export PATH="/usr/local/cuda/bin:$PATH"
T0=$(date +%s)
say() { echo "[$(( $(date +%s) - T0 ))s] $*"; }
finish() { tar czf "$OUT/logs.tgz" -C "$LOGS" . 2>/dev/null; }
trap finish EXIT

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu --format=csv,noheader
say "doctor"; "$BIN" doctor | sed 's/^/  /'

# Live mode in a pseudo-terminal: the app is the pty's foreground process
# (no `timeout` in between, which would move it to a background process group
# where touching the terminal stops it). SIGTERM after 15 s must restore the
# terminal and leave a recording that replays.
if command -v script >/dev/null; then
  ( TERM=xterm-256color script -qfec "$BIN live --record $OUT/live.jsonl" /dev/null >"$LOGS/live-tty.log" 2>&1 ) &
  sleep 15
  pkill -TERM -f "attnscope live --record" ; sleep 3
  pkill -KILL -f "attnscope live --record" && say "live: had to SIGKILL (did not exit on SIGTERM)"
  wait
  say "live: exit sequence in pty log: $(grep -c $'\e\[?1049l' "$LOGS/live-tty.log") alternate-screen leave(s)"
  "$BIN" replay "$OUT/live.jsonl" --summary 2>&1 | head -8 | sed 's/^/  /'
fi

say "selftest"; "$BIN" selftest >"$LOGS/selftest.log" 2>&1; echo "  rc=$?"
grep '^FAIL' "$LOGS/selftest.log" | head -20; tail -1 "$LOGS/selftest.log" | sed 's/^/  /'

say "sanitizers (parallel)"
for v in scalar wmma pv wmma+pv async wmma+async pv+async wmma+pv+async; do
  for tool in memcheck racecheck; do
    ( timeout -k 5 240 compute-sanitizer --tool "$tool" --error-exitcode 9 "$BIN" bench --shape 2,8,512,64 \
        --variants "$v" --launches 2 >"$LOGS/san-$tool-$v.log" 2>&1
      echo "$tool $v rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$LOGS/san-$tool-$v.log" | tail -1)" ) &
  done
done | sort
wait

say "bench S=512 (recorded)"; "$BIN" bench --shape 2,8,512,64 --max-seconds 3 --record "$OUT/bench-s512.jsonl"
say "bench S=512 causal"; "$BIN" bench --shape 2,8,512,64 --causal --max-seconds 3
say "bench S=2048"; "$BIN" bench --shape 2,8,2048,64 --max-seconds 3
say "done"
