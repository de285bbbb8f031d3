#!/usr/bin/env bash
# A real single-node SLURM on this machine, for the tests marked `slurm` (make test-slurm).
#   tests/slurm/cluster.sh up|down|status [STATE_DIR]
# Installs nothing: it needs Debian's packages (apt-get install -y slurm-wlm munge) and starts munged,
# slurmctld and slurmd from them, each with its files (config, keys, sockets, spool, logs, pid files)
# under STATE_DIR (default $LALMBENCH_SLURM_DIR or ${TMPDIR:-/tmp}/lalmbench-slurm). `up` prints the
# line to export (SLURM_CONF) for sbatch/squeue/scontrol to reach it; `down` cancels the cluster's
# jobs and stops exactly the three daemons it started (by their pid files), keeping the logs.
# The client commands reach it through wrappers in STATE_DIR/bin that set SLURM_CONF: the executor
# plugin's job step drops every SLURM_* variable (SLURM_CONF too) before its nested srun, so inside a
# job only a wrapper (or a config at the compiled-in /etc/slurm/slurm.conf) finds this cluster.
# The node and partitions follow the partition file ($LALMBENCH_SLURM_PARTITIONS, default
# profiles/slurm/partitions.yaml), with this machine's CPU count ($LALMBENCH_SLURM_CPUS to declare
# more): tests/slurm/slurm_conf.py says why. Its CPU binding is $LALMBENCH_SLURM_TASK_PLUGIN: task/affinity
# (default) or task/none (Slurm's own default, no binding).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
CMD=${1:-}
STATE=${2:-${LALMBENCH_SLURM_DIR:-${TMPDIR:-/tmp}/lalmbench-slurm}}
PARTITIONS=${LALMBENCH_SLURM_PARTITIONS:-$ROOT/profiles/slurm/partitions.yaml}
PYTHON=${PYTHON:-$ROOT/.venv/bin/python}
[ -x "$PYTHON" ] || PYTHON=python3
INSTALL="apt-get install -y slurm-wlm munge"
DAEMONS="slurmd slurmctld munged"
export SLURM_CONF="$STATE/slurm.conf"
# the real binaries, never the wrappers of an earlier `up`; the daemons are in /usr/sbin
PATH=$(printf %s "$PATH:/usr/sbin:/sbin" | tr : '\n' | grep -vxF "$STATE/bin" | paste -sd: -)
CLIENTS="sacct sacctmgr salloc sattach sbatch sbcast scancel scontrol sdiag sinfo sprio squeue sreport srun sshare sstat strigger"

missing() {
  local m=""
  for b in munged slurmctld slurmd $CLIENTS; do
    command -v "$b" >/dev/null 2>&1 || m="$m $b"
  done
  echo "${m# }"
}

pid_of() {  # the daemon's pid when its pid file names a live process
  local f="$STATE/$1.pid" p
  [ -f "$f" ] || return 1
  p=$(tr -dc 0-9 <"$f")
  [ -n "$p" ] && kill -0 "$p" 2>/dev/null && echo "$p"
}

node_state() { sinfo -h -N -o %T 2>/dev/null | head -n1; }

status() {
  local rc=0
  for d in munged slurmctld slurmd; do
    if p=$(pid_of $d); then echo "$d: running (pid $p)"; else echo "$d: not running"; rc=1; fi
  done
  [ $rc -eq 0 ] && sinfo -o "%P %a %l %D %T %N %G" || true
  echo "export PATH=$STATE/bin:\$PATH"
  return $rc
}

free_ports() {
  "$PYTHON" - <<'EOF'
import socket
socks = [socket.socket() for _ in range(2)]
for s in socks:
    s.bind(("127.0.0.1", 0))
print(*(s.getsockname()[1] for s in socks))
EOF
}

down() {
  if pid_of slurmctld >/dev/null; then
    scancel --quiet --full $(squeue -h -o %i 2>/dev/null) 2>/dev/null || true
    for _ in $(seq 20); do [ -z "$(squeue -h -o %i 2>/dev/null)" ] && break; sleep 0.5; done
  fi
  for d in $DAEMONS; do
    p=$(pid_of $d) || continue
    kill "$p"
    for _ in $(seq 40); do kill -0 "$p" 2>/dev/null || break; sleep 0.25; done
    if kill -0 "$p" 2>/dev/null; then kill -9 "$p"; fi
    echo "stopped $d (pid $p)"
  done
  rm -f "$STATE"/*.pid
}

fail() {
  echo "cluster.sh: $1" >&2
  for f in "$STATE"/log/*.log; do [ -f "$f" ] && { echo "--- $f" >&2; tail -n 20 "$f" >&2; }; done
  down >&2
  exit 1
}

up() {
  local m; m=$(missing)
  if [ -n "$m" ]; then
    echo "cluster.sh: missing $m; install with: $INSTALL" >&2
    exit 3
  fi
  if status >/dev/null 2>&1; then echo "export PATH=$STATE/bin:\$PATH  # already up"; return 0; fi
  down >/dev/null 2>&1 || true
  mkdir -p "$STATE"/{munge,ctld,spool,log,dev,run,bin}
  for c in $CLIENTS; do
    printf '#!/bin/sh\nSLURM_CONF=%s exec %s "$@"\n' "$SLURM_CONF" "$(command -v "$c")" >"$STATE/bin/$c"
    chmod +x "$STATE/bin/$c"
  done
  chmod 755 "$STATE" "$STATE/munge"
  local user; user=$(id -un)
  [ -f "$STATE/munge/munge.key" ] || { dd if=/dev/urandom of="$STATE/munge/munge.key" bs=1024 count=1 2>/dev/null;
                                       chmod 400 "$STATE/munge/munge.key"; }
  # each daemon in the foreground, in the background of this script: $! is the pid `down` stops
  munged --foreground --force --socket="$STATE/munge/munge.socket" --key-file="$STATE/munge/munge.key" \
    --pid-file="$STATE/run/munged.pid" --log-file="$STATE/log/munged.log" --seed-file="$STATE/munge/munged.seed" \
    </dev/null >>"$STATE/log/munged.out" 2>&1 &
  echo $! >"$STATE/munged.pid"
  for _ in $(seq 40); do [ -S "$STATE/munge/munge.socket" ] && break; sleep 0.25; done
  [ -S "$STATE/munge/munge.socket" ] || fail "munged made no socket"
  # shellcheck disable=SC2046
  "$PYTHON" "$ROOT/tests/slurm/slurm_conf.py" --partitions "$PARTITIONS" --state "$STATE" --host "$(hostname -s)" \
    --user "$user" --ports $(free_ports) --cpus "${LALMBENCH_SLURM_CPUS:-$(nproc)}" \
    --task-plugin "${LALMBENCH_SLURM_TASK_PLUGIN:-task/affinity}"
  slurmctld -D -f "$SLURM_CONF" </dev/null >>"$STATE/log/slurmctld.out" 2>&1 &
  echo $! >"$STATE/slurmctld.pid"
  slurmd -D -f "$SLURM_CONF" -N lalm-node </dev/null >>"$STATE/log/slurmd.out" 2>&1 &
  echo $! >"$STATE/slurmd.pid"
  for _ in $(seq 60); do
    for d in munged slurmctld slurmd; do pid_of $d >/dev/null || fail "$d exited"; done
    case "$(node_state)" in idle*|mixed*|allocated*) echo "export PATH=$STATE/bin:\$PATH"; return 0;; esac
    sleep 1
  done
  fail "node not idle after 60 s (state: $(node_state))"
}

case "$CMD" in
  up) up ;;
  down) down ;;
  status) status ;;
  *) echo "usage: $0 up|down|status [STATE_DIR]" >&2; exit 2 ;;
esac
