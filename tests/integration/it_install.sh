#!/bin/sh
# SPDX-License-Identifier: MIT
# `meson install` into a DESTDIR: the daemon, its config and the systemd units land where the
# units say (ExecStart and --config name the installed files, for this build's prefix); the
# socket unit and the service agree on the socket; the sysusers file creates the unit's user; and
# `systemd-analyze security` rates each service at most 2.0 (skipped when it is not installed);
# the service may write its recordings' directory; contactctl's man page is installed and groff
# renders it without a warning (skipped without groff).
# TAP output. Arguments: BUILD_DIR PREFIX SYSCONFDIR BINDIR MANDIR.
set -u
build=$1 prefix=$2 sysconfdir=$3 bindir=$4 mandir=$5
case $sysconfdir in /*) ;; *) sysconfdir=$prefix/$sysconfdir ;; esac
case $bindir in /*) ;; *) bindir=$prefix/$bindir ;; esac
case $mandir in /*) ;; *) mandir=$prefix/$mandir ;; esac
dest=$(mktemp -d /tmp/contactd-install-XXXXXX)
trap 'rm -rf "$dest"' EXIT
n=0 failed=0
check() { # check DESCRIPTION COMMAND...
  n=$((n + 1)) d=$1; shift
  if "$@" >/dev/null 2>&1; then echo "ok $n - $d"; else echo "not ok $n - $d"; failed=1; fi
}
echo "1..12"
check "meson install into a DESTDIR" meson install -C "$build" --no-rebuild --destdir "$dest"
units=$dest$prefix/lib/systemd/system
check "the daemon is at \$bindir" test -x "$dest$bindir/contactd"
check "the config is at \$sysconfdir/contactd" test -f "$dest$sysconfdir/contactd/contactd.conf"
check "contactd.service starts the installed daemon with the installed config" \
  grep -qx "ExecStart=$bindir/contactd --config $sysconfdir/contactd/contactd.conf" \
  "$units/contactd.service"
check "contactd@.service reads one config per instance" \
  grep -qx "ExecStart=$bindir/contactd --config $sysconfdir/contactd/%i.conf" \
  "$units/contactd@.service"
check "the socket unit listens where the service's runtime directory is" \
  sh -c "grep -qx 'ListenStream=/run/contactd/contactd.sock' '$units/contactd.socket' &&
         grep -qx 'RuntimeDirectory=contactd' '$units/contactd.service'"
check "sysusers.d creates the user the units run as" \
  sh -c "grep -q '^u contactd ' '$dest$prefix/lib/sysusers.d/contactd.conf' &&
         grep -qx 'User=contactd' '$units/contactd.service' &&
         grep -qx 'SocketGroup=contactd' '$units/contactd.socket'"
check "the service may write its recordings' directory ([record] dir: \$STATE_DIRECTORY)" \
  grep -qx 'StateDirectory=contactd' "$units/contactd.service"
check "contactctl(1) is installed" test -f "$dest$mandir/man1/contactctl.1"
if command -v groff >/dev/null; then
  check "groff renders contactctl(1) without a warning" \
    sh -c "out=\$(LC_ALL=C.UTF-8 groff -man -Tutf8 -ww -z '$dest$mandir/man1/contactctl.1' 2>&1) &&
           test -z \"\$out\""
else
  n=$((n + 1)); echo "ok $n # SKIP groff is not installed"
fi
for u in contactd.service contactd@.service; do
  if command -v systemd-analyze >/dev/null; then
    check "systemd-analyze security rates $u at most 2.0" \
      systemd-analyze security --offline=yes --threshold=20 "$units/$u"
  else
    n=$((n + 1)); echo "ok $n # SKIP systemd-analyze is not installed"
  fi
done
exit $failed
