#!/bin/sh
# SPDX-License-Identifier: MIT
# The examples against a real daemon, as a newcomer runs them: the haptic demo streams for a
# second and every frame is answered; the grasp holds the box, lets it slip when the grip target
# drops below what holding needs, and catches it again. TAP output.
# Usage: it_examples.sh CONTACTD CONTACTD_DEMO CONTACTD_GRASP
set -u
contactd=$1 demo=$2 grasp=$3
dir=$(mktemp -d /tmp/contactd-examples-XXXXXX)
sock=$dir/contactd.sock
"$contactd" --socket "$sock" --tcp off 2>"$dir/contactd.log" &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$dir"' EXIT
n=0 failed=0
check() { # check DESCRIPTION COMMAND...
  n=$((n + 1)) d=$1; shift
  if "$@"; then echo "ok $n - $d"; else echo "not ok $n - $d"; failed=1; fi
}
echo "1..4"
i=0
while [ ! -S "$sock" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
"$demo" --socket "$sock" --rate 500 --duration 1 >"$dir/demo.out" 2>&1
check "the demo runs" [ $? = 0 ]
# Every frame answered (a deadline missed on a loaded machine is a labelled answer, not a fault).
check "every demo frame answered" grep -Eq '^([0-9]+) frames in .*: \1 results' "$dir/demo.out"
"$grasp" --socket "$sock" --duration 3.5 >"$dir/grasp.out" 2>&1
check "the grasp runs" [ $? = 0 ]
# Held before 1.5 s, slipping between 1.5 and 2.5 s, held again by 3.4 s.
check "the grasp holds, slips and catches" sh -c "
  awk '\$1 == \"1.4\" && /held/ {a=1} \$1 == \"2.4\" && /slipping/ {b=1}
       \$1 == \"3.4\" && /held/ {c=1} END {exit !(a && b && c)}' '$dir/grasp.out'"
[ $failed = 0 ] || cat "$dir/demo.out" "$dir/grasp.out" "$dir/contactd.log" >&2
exit $failed
