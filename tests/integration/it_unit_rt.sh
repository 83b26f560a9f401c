#!/bin/sh
# SPDX-License-Identifier: MIT
# Real-time scheduling under the hardened unit, as far as a machine without systemd as PID 1 can
# play it: the daemon runs as an unprivileged user with exactly the unit's capabilities
# (AmbientCapabilities= and CapabilityBoundingSet= CAP_SYS_NICE CAP_IPC_LOCK), its rlimits
# (LimitRTPRIO=99, LimitMEMLOCK=infinity) and NoNewPrivileges=yes (setpriv, prlimit), and must
# get SCHED_FIFO workers and locked memory; without the capabilities it must say it fell back.
# The unit's SystemCallFilter= is checked against the calls real time needs (systemd-analyze
# expands the sets). Needs root, setpriv and prlimit; skipped otherwise. TAP output.
# Arguments: CONTACTD UNIT_FILE.
set -u
contactd=$1 unit=$2
if [ "$(id -u)" != 0 ] || ! command -v setpriv >/dev/null || ! command -v prlimit >/dev/null ||
   ! id nobody >/dev/null 2>&1; then
  echo "1..0 # SKIP needs root, setpriv, prlimit and the user nobody to play the unit's user"
  exit 77
fi
dir=$(mktemp -d /tmp/contactd-unit-XXXXXX)
chmod 0755 "$dir"
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$dir"' EXIT
n=0 failed=0
check() { # check DESCRIPTION COMMAND...
  n=$((n + 1)) d=$1; shift
  if "$@" >/dev/null 2>&1; then echo "ok $n - $d"; else echo "not ok $n - $d"; failed=1; fi
}
# The syscalls of a systemd filter set, nested sets expanded.
expand() {
  systemd-analyze syscall-filter "$1" 2>/dev/null | awk '!/^ *#/ && NF {print $1}' | tail -n +2 |
    while read -r s; do
      case $s in @*) expand "$s" ;; *) echo "$s" ;; esac
    done
}
# Starts the daemon as nobody with the capability set caps (setpriv syntax), waits until it
# listens (its workers run by then), prints the log and the workers' policies, stops it.
run_as_unit() { # run_as_unit CAPS TAG
  mkdir -p "$dir/$2" && chown nobody "$dir/$2" && : >"$dir/$2.policy"
  printf '[server]\nsocket = %s/%s/s.sock\ntcp = off\n' "$dir" "$2" >"$dir/$2.conf"
  $limits setpriv --reuid=nobody --regid=nogroup --clear-groups --no-new-privs \
    --inh-caps="$1" --ambient-caps="$1" --bounding-set="$1" \
    "$contactd" --config "$dir/$2.conf" 2>"$dir/$2.log" &
  pid=$!
  i=0
  while [ $i -lt 100 ] && ! grep -q 'listening on' "$dir/$2.log"; do sleep 0.1; i=$((i + 1)); done
  # The foreground workers' scheduling policy (field 41 of stat: 1 is SCHED_FIFO), once they
  # have named themselves.
  i=0
  while [ $i -lt 100 ] && ! grep -q '^cd-fg' /proc/$pid/task/*/comm 2>/dev/null; do
    sleep 0.1; i=$((i + 1))
  done
  for t in /proc/$pid/task/*; do
    case $(cat "$t/comm") in
      cd-fg*) awk '{print "policy", $41}' "$t/stat" >>"$dir/$2.policy" ;;
    esac
  done
  kill "$pid"; wait "$pid" 2>/dev/null; pid=
  cat "$dir/$2.log" "$dir/$2.policy"
}

# The unit's rlimits, where this machine lets root raise them (a container may not): with the
# capabilities the kernel does not consult them anyway.
limits="prlimit --rtprio=99 --memlock=unlimited"
$limits true 2>/dev/null || limits=
echo "1..6"
[ -n "$limits" ] || echo "# LimitRTPRIO/LimitMEMLOCK not played: raising them is not permitted here"
expand @system-service | sort -u >"$dir/allowed"
expand @privileged | sort -u >"$dir/denied"
for call in sched_setscheduler sched_setaffinity setpriority mlockall; do
  check "the unit's filter lets $call through (@system-service, not @privileged)" \
    sh -c "grep -qx $call '$dir/allowed' && ! grep -qx $call '$dir/denied'"
done
caps=$(sed -n 's/^AmbientCapabilities=//p' "$unit" | tr 'A-Z ' 'a-z\n' | sed 's/^cap_/+/' |
       paste -sd, -)
run_as_unit "-all,$caps" unit >"$dir/unit.out"
check "with the unit's capabilities ($caps) the workers run SCHED_FIFO with memory locked" \
  sh -c "grep -q 'SCHED_FIFO,' '$dir/unit.out' && grep -qx 'policy 1' '$dir/unit.out' &&
         ! grep -q refused '$dir/unit.out' &&
         grep -q 'memory locked\|mlockall skipped in a sanitizer build' '$dir/unit.out'"
run_as_unit -all none >"$dir/none.out"
check "without them the daemon says it fell back to normal priority" \
  sh -c "grep -q 'SCHED_FIFO refused' '$dir/none.out' && ! grep -qx 'policy 1' '$dir/none.out'"
exit $failed
