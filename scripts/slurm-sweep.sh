#!/usr/bin/env bash
# A sweep as a Slurm job array: one GPU per task, one session per task, then
# one merged session.
#
#   scripts/slurm-sweep.sh OUTDIR TASKS SWEEP-ARGS...
#
#   scripts/slurm-sweep.sh runs/s1 4 --shapes '2,8,512,64;4,16,4096,64;2,16,2048,128;1,32,8192,128' \
#       --variants mma+async@64x128s2w8k2g,cudnn --causal both
#
# Task i of the array (SLURM_ARRAY_TASK_ID picks it) runs
#   attnscope sweep SWEEP-ARGS --slice i/TASKS --out OUTDIR/task-i.jsonl
# on a GPU of its own; after the array (sbatch --wait) the sessions are merged
# into OUTDIR/sweep.jsonl, each task's variants under its GPU's label (h100,
# h200, h100-2, …), so `attnscope replay OUTDIR/sweep.jsonl --summary` shows
# them side by side.
#
# Env:
#   ATTNSCOPE         the binary as the nodes see it (default: attnscope on PATH)
#   SWEEP_GRES        the GPU request per task (default gpu:1; empty: none, e.g. a test cluster)
#   SBATCH_ARGS       more sbatch options, e.g. '-p gpu -t 00:30:00'
#   SWEEP_WORKER_CMD  run each task's GPU work through this worker command
#                     (e.g. the replaying worker, to test the script without GPUs)
set -euo pipefail
out=${1:?usage: scripts/slurm-sweep.sh OUTDIR TASKS SWEEP-ARGS...}
tasks=${2:?usage: scripts/slurm-sweep.sh OUTDIR TASKS SWEEP-ARGS...}
shift 2
[[ "$tasks" =~ ^[1-9][0-9]*$ ]] || { echo "slurm-sweep.sh: TASKS must be a positive number, not '$tasks'" >&2; exit 2; }
[ $# -gt 0 ] || { echo "slurm-sweep.sh: give the sweep's arguments (--shapes …)" >&2; exit 2; }
command -v sbatch >/dev/null || { echo "slurm-sweep.sh: sbatch not found (is this a Slurm login node? SLURM_CONF set?)" >&2; exit 2; }
bin=${ATTNSCOPE:-attnscope}
mkdir -p "$out"
out=$(cd "$out" && pwd)
if compgen -G "$out/task-*.jsonl" >/dev/null || [ -e "$out/sweep.jsonl" ]; then
  echo "slurm-sweep.sh: $out already holds a sweep; give an empty OUTDIR" >&2
  exit 2
fi
# The task's command line, quoted once here so sbatch's shell sees each argument whole.
args=$(printf ' %q' "$@")
worker=""
mark=""
if [ -n "${SWEEP_WORKER_CMD:-}" ]; then
  worker=" --worker-cmd $(printf '%q' "$SWEEP_WORKER_CMD")"
  # attnscope records through a replaying worker only under a name that says so.
  case "$SWEEP_WORKER_CMD" in *--replay*) mark=_replay ;; esac
fi
gres=${SWEEP_GRES-gpu:1}
# shellcheck disable=SC2086
sbatch --wait --parsable --array="0-$((tasks - 1))" ${gres:+--gres="$gres"} ${SBATCH_ARGS:-} \
  --job-name=attnscope-sweep --output="$out/task-%a.log" \
  --wrap "$(printf '%q' "$bin") sweep$args$worker --slice \$SLURM_ARRAY_TASK_ID/$tasks --out $(printf '%q' "$out")/task-\$SLURM_ARRAY_TASK_ID$mark.jsonl" \
  > "$out/job-id" || {
  echo "slurm-sweep.sh: the array failed (job $(cat "$out/job-id" 2>/dev/null)); logs: $out/task-*.log" >&2
  exit 1
}
mapfile -t parts < <(ls "$out"/task-*.jsonl | sort -V)
echo "slurm-sweep.sh: job $(cat "$out/job-id"): ${#parts[@]} of $tasks sessions"
if [ "${#parts[@]}" -eq 1 ]; then
  cp "${parts[0]}" "$out/sweep.jsonl"
else
  "$bin" merge "${parts[@]}" --out "$out/sweep.jsonl"
fi
"$bin" replay "$out/sweep.jsonl" --summary > "$out/summary.txt"
head -n 40 "$out/summary.txt"
echo "slurm-sweep.sh: the whole summary: $out/summary.txt"
