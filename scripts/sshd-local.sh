#!/usr/bin/env bash
# A throwaway sshd on 127.0.0.1 for testing `attnscope worker` over ssh.
#
#   scripts/sshd-local.sh start  DIR   # keys + config under DIR, sshd on a free port; prints the port
#   scripts/sshd-local.sh stop   DIR   # stop the listener and every connection it started
#   scripts/sshd-local.sh drop   DIR   # kill the live connections (SIGKILL their sshd processes);
#                                      # the listener keeps running, the next `ssh` succeeds.
#                                      # The client sees the link close at once (exit 255).
#   scripts/sshd-local.sh freeze DIR   # SIGSTOP the live connections: a silent dead link; the
#                                      # client notices via ServerAlive* in ~3 s (exit 255;
#                                      # silent at LogLevel ERROR). `thaw`/`drop`/`stop` after.
#   scripts/sshd-local.sh thaw   DIR   # SIGCONT what `freeze` stopped
#   scripts/sshd-local.sh status DIR   # exit 0 and print the port while the listener is up
#
# Then:  ssh -F DIR/ssh_config attnscope-test echo ok      -> ok
# DIR/ssh_config names the host `attnscope-test` and `localhost` (127.0.0.1, the port, the current user,
# DIR's client key, DIR/known_hosts pre-populated with the host key, StrictHostKeyChecking yes,
# BatchMode yes, LogLevel ERROR, ServerAliveInterval 1, ServerAliveCountMax 3).
# `-F` means ~/.ssh/config and /etc/ssh/ssh_config are NOT read, so nothing of the user's leaks in.
#
# Remote environment: without PAM, sshd gives sessions its compiled-in PATH
# (/usr/local/bin:/usr/bin:/bin:/usr/games). This script adds `SetEnv PATH=<PATH of the
# `start` caller>` (override with SSHD_LOCAL_PATH=...), so a binary on the test's PATH at
# `start` time is found on the remote side too. Still, tests should prefer absolute paths
# (`ssh ... /abs/path/attnscope worker`). The remote cwd is the user's home directory.
# Extra variables can be passed as SSHD_LOCAL_SETENV="A=1 B=2" (no spaces inside values).
#
# Works as root (the CI case: PermitRootLogin prohibit-password; /run/sshd, the privilege-
# separation dir, is created if missing) and as a non-root user (then sshd can only log that
# user in, which is all we need; no /run/sshd needed). Nothing outside DIR is written except
# /run/sshd when root.
#
# Install (.ci/run), once, ~22 s here incl. man-db triggers (Debian 12, openssh 9.2p1):
#   apt-get install -y --no-install-recommends openssh-server openssh-client
# Gotchas seen/checked (Debian 12 VM, no systemd as PID 1):
#  - installing openssh-server does NOT start a system sshd here: /usr/sbin/policy-rc.d
#    exits 101 ("policy-rc.d denied execution of start"). On a machine that does start one,
#    it listens on :22 and does not conflict with this one (own port, own config, own pid).
#    The package also generates /etc/ssh/ssh_host_* keys; we never use them.
#  - postinst enables ssh.service for systemd; harmless without systemd.
#  - sshd must be started with an absolute path (it re-execs itself).
#  - python3 is used to find a free port (falls back to probing random ports with bash).
#  - Debian's bash sources ~/.bashrc for commands run by sshd, even non-interactive ones
#    (checked: PYENV_ROOT from root's .bashrc shows up remotely, and .bashrc prepends to PATH
#    after SetEnv). So the remote PATH/env = SetEnv + whatever ~/.bashrc does, and anything
#    ~/.bashrc prints to stdout lands in front of the worker's JSON lines: the dashboard should
#    skip non-JSON lines before the worker's hello, and tests should use absolute paths.
#  - the first connection after start took 1-4 s on this 2-core VM, later ones ~0.4 s: `start`
#    waits until `ssh ... true` succeeds before printing the port.
#  - `drop`: the client exits 255 within ~0.1 s ("Connection to 127.0.0.1 closed by remote
#    host." on stderr); the remote command gets EOF on stdin and is not signalled (it exited on
#    its own here); the next ssh succeeds. As root there is one sshd per connection
#    (`sshd: root@notty`, child of the listener); as non-root two. `freeze`: the client exits
#    255 after ~3.3 s (ServerAlive 1 s x 3) with nothing printed at LogLevel ERROR, while new
#    connections still succeed.
#  - a JSON-lines round trip through a coprocess `ssh ... 'while read l; do echo ...; done'`
#    took ~2 ms; closing the client's stdin gives the remote side EOF, ssh exits 0.
set -euo pipefail

SSHD=${SSHD:-/usr/sbin/sshd}
ALIAS=attnscope-test

die() { echo "sshd-local: $*" >&2; exit 1; }

usage() { sed -n '2,12p' "$0" >&2; exit 2; }

[ $# -ge 2 ] || usage
CMD=$1
mkdir -p "$2"
DIR=$(cd "$2" && pwd -P)

need_tools() {
  [ -x "$SSHD" ] || die "$SSHD not found: apt-get install -y --no-install-recommends openssh-server"
  command -v ssh >/dev/null && command -v ssh-keygen >/dev/null ||
    die "ssh/ssh-keygen not found: apt-get install -y --no-install-recommends openssh-client"
}

listener_pid() {
  local pid
  [ -s "$DIR/sshd.pid" ] || return 1
  pid=$(cat "$DIR/sshd.pid")
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 1
  # guard against a recycled pid
  [ "$(cat /proc/"$pid"/comm 2>/dev/null)" = sshd ] || return 1
  echo "$pid"
}

# All descendants of $1 (not $1 itself), parents before children.
descendants() {
  local kids k
  kids=$(pgrep -P "$1" 2>/dev/null || true)
  for k in $kids; do echo "$k"; descendants "$k"; done
}

starttime() { awk '{sub(/.*\) /, ""); print $20}' /proc/"$1"/stat 2>/dev/null || true; }

# OpenSSH 9.8 and later name a connection's processes sshd-session.
is_sshd() { case "$(cat /proc/"$1"/comm 2>/dev/null)" in sshd|sshd-session|sshd-auth) return 0;; esac; return 1; }

free_port() {
  if command -v python3 >/dev/null; then
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
    return
  fi
  local p i
  for i in $(seq 50); do
    p=$((20000 + RANDOM % 40000))
    if ! (exec 3<>/dev/tcp/127.0.0.1/$p) 2>/dev/null; then echo "$p"; return; fi
  done
  die "no free port found"
}

start() {
  need_tools
  local pid
  if pid=$(listener_pid); then
    echo "sshd-local: already running (pid $pid)" >&2
    cat "$DIR/port"
    return 0
  fi
  local user home
  user=$(id -un)
  if [ "$(id -u)" = 0 ] && [ ! -d /run/sshd ]; then
    mkdir -p /run/sshd && chmod 0755 /run/sshd
  fi
  [ -f "$DIR/host_ed25519" ] || ssh-keygen -q -t ed25519 -N '' -C attnscope-test-host -f "$DIR/host_ed25519"
  [ -f "$DIR/id_ed25519" ] || ssh-keygen -q -t ed25519 -N '' -C attnscope-test-client -f "$DIR/id_ed25519"
  chmod 600 "$DIR/host_ed25519" "$DIR/id_ed25519"
  cp "$DIR/id_ed25519.pub" "$DIR/authorized_keys"
  echo "$ALIAS $(cut -d' ' -f1,2 "$DIR/host_ed25519.pub")" > "$DIR/known_hosts"

  local path_env=${SSHD_LOCAL_PATH:-$PATH}
  local tries port
  for tries in 1 2 3 4 5; do
    port=$(free_port)
    {
      echo "# generated by scripts/sshd-local.sh"
      echo "ListenAddress 127.0.0.1"
      echo "Port $port"
      echo "AddressFamily inet"
      echo "HostKey $DIR/host_ed25519"
      echo "PidFile $DIR/sshd.pid"
      echo "AuthorizedKeysFile $DIR/authorized_keys"
      echo "AuthenticationMethods publickey"
      echo "PubkeyAuthentication yes"
      echo "PasswordAuthentication no"
      echo "KbdInteractiveAuthentication no"
      echo "UsePAM no"
      echo "StrictModes no"
      echo "PermitRootLogin prohibit-password"
      echo "AllowUsers $user"
      echo "PrintMotd no"
      echo "PrintLastLog no"
      echo "UseDNS no"
      echo "X11Forwarding no"
      echo "AllowTcpForwarding no"
      echo "AllowAgentForwarding no"
      echo "PermitTTY yes"
      echo "MaxStartups 50:30:100"
      echo "MaxSessions 50"
      echo "LogLevel INFO"
      echo "SetEnv \"PATH=$path_env\" ATTNSCOPE_SSH_TEST=1 ${SSHD_LOCAL_SETENV:-}"
    } > "$DIR/sshd_config"
    # -t first: a bad config fails here with a readable message
    "$SSHD" -t -f "$DIR/sshd_config" || die "sshd -t rejected $DIR/sshd_config"
    rm -f "$DIR/sshd.pid"
    if "$SSHD" -f "$DIR/sshd_config" -E "$DIR/sshd.log"; then
      local i
      for i in $(seq 50); do
        if pid=$(listener_pid); then break; fi
        sleep 0.1
      done
      [ -n "${pid:-}" ] || die "sshd started but wrote no pid file; see $DIR/sshd.log"
      break
    fi
    echo "sshd-local: sshd failed on port $port (try $tries); tail of $DIR/sshd.log:" >&2
    tail -3 "$DIR/sshd.log" >&2 || true
    port=
  done
  [ -n "$port" ] || die "could not start sshd; see $DIR/sshd.log"
  echo "$port" > "$DIR/port"

  cat > "$DIR/ssh_config" <<EOF
# generated by scripts/sshd-local.sh; use: ssh -F $DIR/ssh_config $ALIAS CMD...
Host $ALIAS localhost
  HostName 127.0.0.1
  Port $port
  User $user
  IdentityFile $DIR/id_ed25519
  IdentitiesOnly yes
  IdentityAgent none
  HostKeyAlias $ALIAS
  UserKnownHostsFile $DIR/known_hosts
  GlobalKnownHostsFile /dev/null
  StrictHostKeyChecking yes
  UpdateHostKeys no
  BatchMode yes
  LogLevel ERROR
  ConnectTimeout 5
  ServerAliveInterval 1
  ServerAliveCountMax 3
  ControlMaster no
  ControlPath none
  ForwardAgent no
  ForwardX11 no
  RequestTTY auto
EOF
  # wait until it answers (normally immediately)
  local i
  for i in $(seq 30); do
    if ssh -F "$DIR/ssh_config" "$ALIAS" true </dev/null 2>/dev/null; then
      echo "$port"
      return 0
    fi
    sleep 0.2
  done
  tail -5 "$DIR/sshd.log" >&2 || true
  die "sshd is running on port $port but 'ssh -F $DIR/ssh_config $ALIAS true' fails"
}

# pids of the per-connection sshd processes (children of the listener and their sshd kids)
conn_sshd_pids() {
  local lp=$1 p
  for p in $(descendants "$lp"); do is_sshd "$p" && echo "$p"; done
  return 0
}

drop() {
  local lp pids p left=""
  lp=$(listener_pid) || die "not running (no live pid in $DIR/sshd.pid)"
  local all; all=$(descendants "$lp")
  pids=$(conn_sshd_pids "$lp")
  if [ -z "$pids" ]; then echo "sshd-local: no live connections"; return 0; fi
  # shellcheck disable=SC2086
  kill -KILL $pids 2>/dev/null || true
  # give the remote commands up to 2 s to see EOF and exit
  local i
  for i in $(seq 20); do
    sleep 0.1
    left=""
    for p in $all; do
      if ! is_sshd "$p" && kill -0 "$p" 2>/dev/null; then left="$left $p"; fi
    done
    [ -n "$left" ] || break
  done
  echo "sshd-local: dropped connection processes:" $pids
  if [ -n "$left" ]; then
    # Like a real link drop: the remote commands lose their pipes (EOF on stdin, EPIPE on
    # stdout) but are not signalled. Report them so a test can check they exit on EOF.
    echo "sshd-local: remote commands still running 2 s after the drop:$left"
    # shellcheck disable=SC2086
    for p in $left; do echo "$p $(starttime "$p")" >> "$DIR/orphans"; done
  fi
}

signal_conns() {
  local sig=$1 lp pids
  lp=$(listener_pid) || die "not running"
  pids=$(conn_sshd_pids "$lp")
  [ -n "$pids" ] || { echo "sshd-local: no live connections"; return 0; }
  # shellcheck disable=SC2086
  kill "-$sig" $pids
  echo "sshd-local: SIG$sig ->" $pids
}

stop() {
  local lp all p
  if lp=$(listener_pid); then
    all=$(descendants "$lp")
    kill -TERM "$lp" 2>/dev/null || true
    # connections (and their commands) outlive the listener's SIGTERM: end them too
    for p in $all; do kill -CONT "$p" 2>/dev/null || true; done
    # shellcheck disable=SC2086
    [ -z "$all" ] || kill -KILL $all 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$lp" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$lp" 2>/dev/null && kill -KILL "$lp" 2>/dev/null || true
    echo "sshd-local: stopped (pid $lp)"
  else
    echo "sshd-local: not running"
  fi
  if [ -f "$DIR/orphans" ]; then
    local st
    while read -r p st; do
      # only if it is still the same process (pid not recycled)
      [ -n "$p" ] && [ "$(starttime "$p")" = "$st" ] && kill -KILL "$p" 2>/dev/null || true
    done < "$DIR/orphans"
    rm -f "$DIR/orphans"
  fi
  rm -f "$DIR/sshd.pid"
}

case "$CMD" in
  start) start ;;
  stop) stop ;;
  drop) drop ;;
  freeze) signal_conns STOP ;;
  thaw) signal_conns CONT ;;
  status)
    if lp=$(listener_pid); then echo "running pid $lp port $(cat "$DIR/port")"; else echo "not running"; exit 1; fi ;;
  *) usage ;;
esac
