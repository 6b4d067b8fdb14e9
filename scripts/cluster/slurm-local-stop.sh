#!/usr/bin/env bash
# slurm-local-stop.sh: stop the daemons that slurm-local.sh started, by the PIDs it
# recorded in $SLURM_LOCAL_DIR/pids, never by name; a PID whose program is not the
# recorded one (recycled) is left alone. --purge also deletes the state directory.
set -uo pipefail
D=${SLURM_LOCAL_DIR:-/tmp/depthwidth-slurm}
PURGE=0
case "${1:-}" in
  "") ;;
  --purge) PURGE=1 ;;
  *) echo "slurm-local-stop.sh: unknown argument '$1' (only --purge)" >&2; exit 2 ;;
esac

running() {
  local st
  st=$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f1) || return 1
  [ -n "$st" ] && [ "$st" != Z ] && [ "$st" != X ]
}

# slurmd first: slurmctld would otherwise mark the node down and log noise
for name in slurmd slurmctld munged; do
  f="$D/pids/$name.pid"
  [ -f "$f" ] || continue
  pid=$(cat "$f")
  if running "$pid" && [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = "$name" ]; then
    echo "stopping $name (pid $pid)"
    kill "$pid"
    for _ in $(seq 1 75); do running "$pid" || break; sleep 0.2; done
    if running "$pid"; then echo "  $name still running after 15 s: SIGKILL"; kill -9 "$pid"; fi
  fi
  rm -f "$f"
done
rm -f "$D/pids/slurm.confsha"
if [ "$PURGE" = 1 ]; then rm -rf "$D"; echo "removed $D"; fi
exit 0
