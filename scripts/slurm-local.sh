#!/usr/bin/env bash
# A throwaway single-node Slurm on localhost for testing `srun ... attnscope worker` and sweeps.
#
#   scripts/slurm-local.sh start  DIR   # munged + slurmctld + slurmd, all state under DIR;
#                                       # waits until the node is idle; prints SLURM_CONF=DIR/slurm.conf
#   scripts/slurm-local.sh stop   DIR   # cancel jobs, stop slurmd, slurmctld, munged
#   scripts/slurm-local.sh status DIR   # sinfo; exit 1 when slurmctld is not up
#
# Then:  export SLURM_CONF=DIR/slurm.conf   (or: . DIR/env.sh)
#        srun -N1 hostname
#        sbatch --array=0-2 --wait --output=DIR/out-%a.txt --wrap 'echo task $SLURM_ARRAY_TASK_ID'
# Every client command (srun, sbatch, squeue, scancel, sinfo, scontrol) needs SLURM_CONF, else it
# reads /etc/slurm/slurm.conf (absent) and fails with "Could not establish a configuration source".
#
# Layout under DIR: slurm.conf, env.sh, munge/ (key, socket, pid, log, seed; mode
# 0755, key 0600), state/ctld (StateSaveLocation), state/d (SlurmdSpoolDir), log/{slurmctld,slurmd}.log,
# run/{slurmctld,slurmd}.pid. Ports: two free ones picked at start (not 6817/6818), so it does not
# clash with a system Slurm or a second instance. Node = `hostname -s` at 127.0.0.1, CPUs = nproc,
# one partition `debug` (Default, MaxTime=INFINITE), select/cons_tres CR_CPU, no gres,
# proctrack/linuxproc, task/none, no accounting, ReturnToService=2, SlurmUser = current user.
#
# Auth: AuthType=auth/munge by default, with a private munged (own key in DIR, own socket; the
# socket path goes to Slurm via AuthInfo=socket=...). SLURM_LOCAL_AUTH=none uses auth/none +
# cred/none instead, no munged at all: Debian 12's Slurm 22.05 still ships auth_none.so and it
# works for srun/sbatch here, but upstream dropped auth/none in 23.11, so munge is the default.
#
# Install (.ci/run), once; ~7 s here (Debian 12, slurm-wlm 22.05.8, munge 0.5.15):
#   apt-get install -y --no-install-recommends slurm-wlm munge
# (slurm-wlm = slurmctld + slurmd + slurm-client + slurm-wlm-basic-plugins.)
# Gotchas seen/checked (Debian 12 VM, no systemd as PID 1, cgroup v1+v2 hybrid, 2 CPUs):
#  - installing does NOT start munge/slurmctld/slurmd here (/usr/sbin/policy-rc.d exits 101);
#    postinst just enables the systemd units. The package's /etc/munge/munge.key is not used.
#  - no cgroup plugin is loaded (proctrack/linuxproc + task/none + jobacct_gather/none): no
#    cgroup.conf, nothing under /sys/fs/cgroup is touched (slurmd.log has no cgroup line), so
#    this works in containers without a writable cgroupfs or systemd.
#  - harmless log noise: "mpi/pmix_v4: ... can not load PMIx library" (slurm-wlm-basic-plugins
#    ships the pmix plugin, libpmix isn't installed; MpiDefault=none), and on a fresh DIR
#    "Could not open job state file" (there is none yet).
#  - slurmstepd processes are reparented to init, not children of slurmd: `stop` scancels
#    everything and waits for the queue to drain before killing the daemons.
#  - root is the CI case; a non-root user works too (checked: srun + the array job), with
#    SlurmUser=SlurmdUser=that user, so only that user's own jobs can run. /usr/sbin is not on a
#    non-root PATH on Debian, hence the absolute daemon paths; srun/sbatch are in /usr/bin.
#  - the first batch job after `start` took ~3 s to reach R (scheduler cycle); srun starts in
#    ~0.1 s. `sbatch --wait` polls slowly: the 3-task array with `echo` took ~10 s to return.
#  - `stop` takes ~3-4 s (slurmd/slurmctld/munged each need ~1.5-2 s after SIGTERM).
#  - srun forwards stdin to task 0 and stdout back line by line (checked with a JSON-lines echo
#    loop through a coprocess: ~10 ms per round trip, with or without `srun -u`). `scancel`
#    of the job makes srun exit 143 ("task 0: Terminated") within ~0.1 s; SIGKILL of srun
#    ends the job step within ~3 s (it is gone from squeue), even with InactiveLimit=0.
#  - MinJobAge=300 (default): finished jobs stay visible to squeue/scontrol for 5 min.
set -euo pipefail

die() { echo "slurm-local: $*" >&2; exit 1; }
usage() { sed -n '2,7p' "$0" >&2; exit 2; }

[ $# -ge 2 ] || usage
CMD=$1
mkdir -p "$2"
DIR=$(cd "$2" && pwd -P)
CONF=$DIR/slurm.conf
AUTH=${SLURM_LOCAL_AUTH:-munge}
# absolute paths: /usr/sbin is not on a non-root user's PATH on Debian
SLURMCTLD=${SLURMCTLD:-/usr/sbin/slurmctld}
SLURMD=${SLURMD:-/usr/sbin/slurmd}
export SLURM_CONF=$CONF

need_tools() {
  local t
  for t in "$SLURMCTLD" "$SLURMD"; do
    [ -x "$t" ] || die "$t not found: apt-get install -y --no-install-recommends slurm-wlm munge"
  done
  command -v srun >/dev/null || die "srun not found: apt-get install -y --no-install-recommends slurm-client"
  if [ "$AUTH" = munge ]; then
    [ -x /usr/sbin/munged ] || die "/usr/sbin/munged not found: apt-get install -y --no-install-recommends munge"
  fi
}

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()' 2>/dev/null && return
  local p
  for _ in $(seq 50); do
    p=$((20000 + RANDOM % 40000))
    if ! (exec 3<>/dev/tcp/127.0.0.1/$p) 2>/dev/null; then echo "$p"; return; fi
  done
  die "no free port found"
}

pid_alive() { # pidfile expected-comm-prefix
  local pid
  [ -s "$1" ] || return 1
  pid=$(cat "$1")
  kill -0 "$pid" 2>/dev/null || return 1
  case "$(cat /proc/"$pid"/comm 2>/dev/null)" in "$2"*) echo "$pid" ;; *) return 1 ;; esac
}

start_munge() {
  mkdir -p "$DIR/munge"
  chmod 0755 "$DIR/munge"   # munged: socket dir must be o+x, not group/other-writable
  if pid_alive "$DIR/munge/munged.pid" munged >/dev/null; then return 0; fi
  if [ ! -s "$DIR/munge/munge.key" ]; then
    # mungekey(8) exists in munge >= 0.5.14; fall back to dd
    if command -v mungekey >/dev/null; then
      mungekey --create --keyfile="$DIR/munge/munge.key" >/dev/null
    else
      dd if=/dev/urandom of="$DIR/munge/munge.key" bs=1024 count=1 status=none
    fi
  fi
  chmod 0600 "$DIR/munge/munge.key"
  rm -f "$DIR/munge/munged.sock" "$DIR/munge/munged.sock.lock"
  # munged checks that the key, log, pid and socket dirs are not writable by others; DIR/munge is
  # 0755 and owned by us, so no --force is needed; an insecure parent (e.g. DIR in a 0777 dir
  # without the sticky bit) makes it refuse: then see DIR/munge/munged.log.
  /usr/sbin/munged \
    --key-file="$DIR/munge/munge.key" \
    --socket="$DIR/munge/munged.sock" \
    --pid-file="$DIR/munge/munged.pid" \
    --log-file="$DIR/munge/munged.log" \
    --seed-file="$DIR/munge/munged.seed" \
    || { tail -5 "$DIR/munge/munged.log" >&2 2>/dev/null; die "munged failed to start"; }
  for _ in $(seq 50); do [ -S "$DIR/munge/munged.sock" ] && break; sleep 0.1; done
  if command -v munge >/dev/null && command -v unmunge >/dev/null; then
    munge -n -S "$DIR/munge/munged.sock" | unmunge -S "$DIR/munge/munged.sock" >/dev/null ||
      die "munge self-test failed; see $DIR/munge/munged.log"
  fi
}

write_conf() {
  local node user cpus ctld_port d_port
  node=$(hostname -s)
  user=$(id -un)
  cpus=$(nproc)
  ctld_port=$(free_port)
  d_port=$(free_port)
  while [ "$d_port" = "$ctld_port" ]; do d_port=$(free_port); done
  mkdir -p "$DIR/state/ctld" "$DIR/state/d" "$DIR/log" "$DIR/run" "$DIR/tmp"
  local auth_lines
  if [ "$AUTH" = munge ]; then
    auth_lines="AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$DIR/munge/munged.sock"
  else
    auth_lines="AuthType=auth/none
CredType=cred/none"
  fi
  cat > "$CONF" <<EOF
# generated by scripts/slurm-local.sh; use: export SLURM_CONF=$CONF
ClusterName=attnscope
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$d_port
SlurmUser=$user
SlurmdUser=$user
$auth_lines
MpiDefault=none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SwitchType=switch/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
StateSaveLocation=$DIR/state/ctld
SlurmdSpoolDir=$DIR/state/d
SlurmctldPidFile=$DIR/run/slurmctld.pid
SlurmdPidFile=$DIR/run/slurmd.pid
SlurmctldLogFile=$DIR/log/slurmctld.log
SlurmdLogFile=$DIR/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
TmpFS=$DIR/tmp
MailProg=/bin/true
InactiveLimit=0
KillWait=5
SlurmctldTimeout=30
SlurmdTimeout=30
MessageTimeout=10
NodeName=$node NodeAddr=127.0.0.1 CPUs=$cpus State=UNKNOWN
PartitionName=debug Nodes=$node Default=YES MaxTime=INFINITE State=UP
EOF
  echo "export SLURM_CONF=$CONF" > "$DIR/env.sh"
}

start() {
  need_tools
  if pid_alive "$DIR/run/slurmctld.pid" slurmctld >/dev/null; then
    echo "slurm-local: already running" >&2
    echo "SLURM_CONF=$CONF"
    return 0
  fi
  [ "$AUTH" = munge ] && start_munge
  write_conf
  local node; node=$(hostname -s)
  # -c: cold start, forget any job state a previous run left in DIR/state/ctld
  "$SLURMCTLD" -c -f "$CONF" || die "slurmctld failed; see $DIR/log/slurmctld.log"
  for _ in $(seq 100); do scontrol ping >/dev/null 2>&1 && break; sleep 0.1; done
  scontrol ping >/dev/null 2>&1 || { tail -20 "$DIR/log/slurmctld.log" >&2; die "slurmctld does not answer"; }
  "$SLURMD" -f "$CONF" -N "$node" || die "slurmd failed; see $DIR/log/slurmd.log"
  local st=""
  for _ in $(seq 150); do
    st=$(sinfo -h -n "$node" -o %t 2>/dev/null || true)
    case "$st" in idle|mix|alloc) break ;; esac
    sleep 0.2
  done
  case "$st" in
    idle|mix|alloc) ;;
    *) tail -20 "$DIR/log/slurmd.log" >&2; sinfo -R >&2 || true
       die "node $node is '$st', not idle, after 30 s; logs in $DIR/log" ;;
  esac
  echo "SLURM_CONF=$CONF"
}

stop() {
  local pid
  if pid_alive "$DIR/run/slurmctld.pid" slurmctld >/dev/null; then
    # cancel every job, so no slurmstepd (reparented to init) outlives us
    local jobs
    jobs=$(squeue -h -o %A 2>/dev/null || true)
    if [ -n "$jobs" ]; then
      # shellcheck disable=SC2086
      scancel $jobs 2>/dev/null || true
      for _ in $(seq 100); do
        [ -z "$(squeue -h -t R,CG,PD,CF -o %A 2>/dev/null)" ] && break
        sleep 0.1
      done
    fi
  fi
  # each daemon takes ~1.5-2 s to exit after SIGTERM here: signal both, then wait
  local what pids=""
  for what in slurmd slurmctld; do
    if pid=$(pid_alive "$DIR/run/$what.pid" "$what"); then
      kill -TERM "$pid" 2>/dev/null || true
      pids="$pids $pid"
      echo "slurm-local: stopping $what (pid $pid)"
    fi
  done
  for pid in $pids; do
    for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null || true
  done
  if pid=$(pid_alive "$DIR/munge/munged.pid" munged); then
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null || true
    echo "slurm-local: stopped munged (pid $pid)"
  fi
}

case "$CMD" in
  start) start ;;
  stop) stop ;;
  status)
    if pid_alive "$DIR/run/slurmctld.pid" slurmctld >/dev/null && scontrol ping >/dev/null 2>&1; then
      sinfo
    else
      echo "not running"; exit 1
    fi ;;
  *) usage ;;
esac
