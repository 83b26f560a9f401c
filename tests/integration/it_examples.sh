#!/bin/sh
# SPDX-License-Identifier: MIT
# The examples against a real daemon, as a newcomer runs them: the haptic demo streams for a
# second and every frame is answered; the grasp holds the box, lets it slip when the grip target
# drops below what holding needs, and catches it again; the haptic loop presses a plane and seats
# a peg, with the statics it renders checked against the analytic values. TAP output.
# Usage: it_examples.sh CONTACTD CONTACTD_DEMO CONTACTD_GRASP CONTACTD_HAPTIC
set -u
contactd=$1 demo=$2 grasp=$3 haptic=$4
plot=$(dirname "$0")/../../clients/examples/haptic_plot.gp
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
echo "1..13"
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
# The haptic loop, 2 s: 1 s on the plane, 1 s in the peg hole, one CSV row per millisecond.
"$haptic" --socket "$sock" --duration 2 --csv "$dir/haptic.csv" >"$dir/haptic.out" 2>&1
check "the haptic loop runs" [ $? = 0 ]
# haptic_awk PROGRAM: runs PROGRAM over the CSV's rows (twice: pass 1 where NR == FNR) with the
# constants of its first line (# k=... m=...) in P[] and the column numbers by name in C[].
haptic_awk() {
  awk -F, '
    FNR == 1 { nk = split($0, kv, " "); for (i = 2; i <= nk; i++) { split(kv[i], p, "=")
               P[p[1]] = p[2] }; next }
    FNR == 2 { for (i = 1; i <= NF; i++) C[$i] = i; next }
    { t = $C["t"]; seg = $C["segment"]; st = $C["status"] }
    '"$1" "$dir/haptic.csv" "$dir/haptic.csv"
}
# Every millisecond has a row, and every Result is certified (OK) or labelled as not.
check "one haptic row a millisecond, each Result OK or labelled" haptic_awk '
  NR == FNR { next }
  { n++; bad += st !~ /^(OK|DEADLINE|FALLBACK|FAILED)$/ }
  END { exit !(n == 2000 && bad == 0) }'
# Static contact, the second half of the hold: the probe rests on the plane, so the spring is
# stretched by sphere_r - dev_z and the rendered force is k times that; the probe in equilibrium
# makes it the contact's normal force minus the probe's weight. (A labelled answer carries the
# last certified forces, the same at rest; a FAILED one has none.)
check "pressing the plane renders k x depth = contact force - m g" haptic_awk '
  NR == FNR { if (seg == "plane-hold") { lo = lo == "" || t < lo ? t : lo; hi = t > hi ? t : hi }
              next }
  seg == "plane-hold" && t >= (lo + hi) / 2 && st != "FAILED" {
    n++; f = $C["render_z"]
    e1 = f - P["k"] * (P["sphere_r"] - $C["dev_z"]); e2 = f - ($C["contact_z"] - P["m"] * P["g"])
    if (e1 < 0) e1 = -e1; if (e2 < 0) e2 = -e2
    bad += e1 > 0.02 || e2 > 0.02 || f < 3 }
  END { exit !(n > 0.4 * (hi - lo) * 1000 && bad == 0) }'
check "the probe never sinks more than 0.1 mm into a surface" haptic_awk '
  NR == FNR { next }
  { floor = seg ~ /^plane/ ? 0 : -P["hole_d"]; bad += $C["bottom_z"] < floor - 1e-4 }
  END { exit bad != 0 }'
# The peg ends on the hole bottom (within 0.1 mm), pressed by the handle and touching the wall
# it was pushed against (the rendered force has an x part).
check "the peg ends seated" haptic_awk '
  NR == FNR { next }
  { last_seg = seg; z = $C["bottom_z"]; fx = $C["render_x"]; fz = $C["render_z"] }
  END { d = z + P["hole_d"]; exit !(last_seg == "peg-seat" && d < 1e-4 && d > -1e-4 &&
                                    fz > 2 && fx < -1) }'
if command -v gnuplot >/dev/null; then
  gnuplot -e "csv='$dir/haptic.csv'; png='$dir/haptic.png'" "$plot" 2>"$dir/gnuplot.err"
  check "the haptic plot script draws a PNG" sh -c "
    [ -s '$dir/haptic.png' ] && head -c 8 '$dir/haptic.png' | od -c | grep -q 'P   N   G'"
else
  n=$((n + 1)); echo "ok $n # SKIP gnuplot not installed"
fi
# A daemon that refuses the demo's Hello (TCP without its token): the demo says so and stops,
# where it waits out its start-up retries only for a daemon that is not there yet (one refusal
# in the daemon's log, not one every 100 ms for 5 s). With --token-file it is let in.
echo 0123456789abcdef0123 >"$dir/token"
printf '[server]\nauth_token_file = %s\n' "$dir/token" >"$dir/token.conf"
"$contactd" -c "$dir/token.conf" --socket "$dir/refusing.sock" --tcp 127.0.0.1:0 \
  2>"$dir/refusing.log" &
pid2=$!
trap 'kill $pid $pid2 2>/dev/null; wait $pid $pid2 2>/dev/null; rm -rf "$dir"' EXIT
i=0
while ! grep -q 'listening on' "$dir/refusing.log" && [ $i -lt 100 ]; do
  sleep 0.1; i=$((i + 1))
done
port=$(sed -n 's/.*listening on .*tcp:127\.0\.0\.1:\([0-9]*\).*/\1/p' "$dir/refusing.log")
"$demo" --tcp "127.0.0.1:$port" --duration 1 >"$dir/refused.out" 2>&1
check "a refused demo exits, saying why" sh -c "[ $? != 0 ] &&
  grep -q 'refused the session' '$dir/refused.out' &&
  ! grep -q 'is contactd running' '$dir/refused.out'"
"$demo" --tcp "127.0.0.1:$port" --token-file "$dir/token" --rate 500 --duration 0.5 \
  >"$dir/token.out" 2>&1
check "the demo with --token-file runs over TCP, every frame answered" sh -c "[ $? = 0 ] &&
  grep -Eq '^([0-9]+) frames in .*: \\1 results' '$dir/token.out'"
kill $pid2; wait $pid2
check "the refused demo said Hello once" [ "$(grep -c ERROR_DENIED "$dir/refusing.log")" = 1 ]
[ $failed = 0 ] || cat "$dir/demo.out" "$dir/grasp.out" "$dir/haptic.out" "$dir/contactd.log" \
  "$dir/gnuplot.err" "$dir/refused.out" "$dir/token.out" "$dir/refusing.log" >&2
exit $failed
