#!/usr/bin/env bash
# A long session stays bounded: the live dashboard in tmux (120×40), recording,
# fed by a worker command for MINUTES; its RSS sampled every 30 s; then `q`,
# and the figures: events per second, events sent vs recorded (dropped must
# be 0), link errors, and whether the recorded file replays to the same
# per-variant medians as the session the worker replayed.
#
#   scripts/soak.sh MINUTES OUTDIR                   # CPU: replaying worker, 10× rate
#   SOAK_WORKER='attnscope worker' scripts/soak.sh 9 OUTDIR   # GPU: the real worker
#
# Env: ATTNSCOPE_BIN (default target/release/attnscope), SOAK_SESSION (default
# the bundled H100 session), SOAK_RATE (default 10), SOAK_WORKER (a worker
# command; default the replaying worker at SOAK_RATE).
# Needs tmux and python3. Writes OUTDIR/{soak.jsonl,rss.log,worker.err,
# dashboard.err,screen-end.txt,report.txt}; prints the report.
set -euo pipefail
minutes=${1:?usage: scripts/soak.sh MINUTES OUTDIR}
out=${2:?usage: scripts/soak.sh MINUTES OUTDIR}
root=$(cd "$(dirname "$0")/.." && pwd)
bin=$(realpath "${ATTNSCOPE_BIN:-$root/target/release/attnscope}")
session=$(realpath "${SOAK_SESSION:-$root/sessions/20261123-180803_H100_remote-tour.jsonl.zst}")
rate=${SOAK_RATE:-10}
mkdir -p "$out"
out=$(realpath "$out")
[ -e "$out/soak.jsonl" ] && { echo "soak.sh: $out/soak.jsonl exists; give an empty OUTDIR" >&2; exit 2; }
command -v tmux >/dev/null || { echo "soak.sh: needs tmux (apt-get install tmux)" >&2; exit 2; }
worker=${SOAK_WORKER:-"$(printf '%q' "$bin") worker --replay $(printf '%q' "$session") --rate $rate"}
name="attnscope-soak-$$"
wcmd="$worker 2>>$(printf '%q' "$out/worker.err")"
tmux new-session -d -s "$name" -x 120 -y 40 \
  "$(printf '%q' "$bin") live --worker-cmd $(printf '%q' "$wcmd") --record $(printf '%q' "$out/soak.jsonl") 2>$(printf '%q' "$out/dashboard.err"); sleep 2"
sleep 2
# This soak's dashboard: the one whose recording is ours.
pid=$(pgrep -f -- "^$bin live .*--record $out/soak.jsonl" | head -1)
[ -n "$pid" ] || { echo "soak.sh: the dashboard did not start:" >&2; cat "$out/dashboard.err" >&2; exit 1; }
start=$(date +%s)
end=$((start + minutes * 60))
echo "t_s rss_kib" > "$out/rss.log"
while [ "$(date +%s)" -lt "$end" ] && kill -0 "$pid" 2>/dev/null; do
  echo "$(( $(date +%s) - start )) $(awk '/VmRSS/ {print $2}' /proc/$pid/status)" >> "$out/rss.log"
  sleep 30
done
echo "$(( $(date +%s) - start )) $(awk '/VmRSS/ {print $2}' /proc/$pid/status 2>/dev/null || echo gone)" >> "$out/rss.log"
tmux capture-pane -p -t "$name" > "$out/screen-end.txt" || true
tmux send-keys -t "$name" q
for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
tmux kill-session -t "$name" 2>/dev/null || true
elapsed=$(( $(date +%s) - start ))

python3 - "$out" "$session" "$elapsed" "$bin" <<'EOF' | tee "$out/report.txt"
import json, re, subprocess, sys
out, source, elapsed, bin_ = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
kinds, link_errors = {}, []
with open(f"{out}/soak.jsonl") as f:
    for line in f:
        e = json.loads(line)["event"]
        kinds[e["type"]] = kinds.get(e["type"], 0) + 1
        # The supervisor's own lines about the link; everything else came from the worker.
        if e["type"] == "error" and e.get("source") == "link":
            link_errors.append(e["message"])
recorded = sum(kinds.values())
from_worker = recorded - len(link_errors)
sent = None
try:
    m = re.search(r"sent (\d+) events", open(f"{out}/worker.err").read())
    sent = int(m.group(1)) if m else None
except FileNotFoundError:
    pass
rss = [l.split() for l in open(f"{out}/rss.log").read().splitlines()[1:]]
rss = [(int(t), int(k)) for t, k in rss if k.isdigit()]
print(f"soak: {elapsed} s; dashboard RSS {rss[0][1]/1024:.1f} MiB at {rss[0][0]} s, "
      f"max {max(k for _, k in rss)/1024:.1f} MiB, {rss[-1][1]/1024:.1f} MiB at {rss[-1][0]} s")
print(f"events recorded: {recorded} ({recorded/elapsed:.1f}/s); from the worker: {from_worker}; "
      f"the worker sent: {sent if sent is not None else 'not reported'}; "
      f"dropped: {sent - from_worker if sent is not None else 'unknown'}")
print(f"link errors (gaps, drops, stray lines): {len(link_errors)}" + "".join(f"\n  {m}" for m in link_errors[:5]))
def medians(path):
    j = json.loads(subprocess.run([bin_, "replay", path, "--summary", "--json"],
                                  capture_output=True, text=True, check=True).stdout)
    return {(v["variant"], json.dumps(v["shape"], sort_keys=True), r["regime"]): r["latency_ns"]["p50"]
            for v in j.get("variants", []) for r in v.get("runs", [])}
a, b = medians(source), medians(f"{out}/soak.jsonl")
# The recording holds the source's samples k times over (plus a partial last
# loop), so each row's p50 should match closely.
diffs = [abs(b[k] / a[k] - 1) for k in a if k in b and a[k]]
print(f"replay of the recording: {len(diffs)} of {len(a)} (variant, shape, regime) rows present; "
      f"p50 within {max(diffs, default=0) * 100:.3f}% of the source session's")
EOF
