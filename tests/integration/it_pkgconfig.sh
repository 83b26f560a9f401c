#!/bin/sh
# SPDX-License-Identifier: MIT
# libcontactd-client as a program outside this tree uses it: box_client.c is compiled with a
# plain `cc` and nothing but `pkg-config --cflags --libs libcontactd-client`, first against meson's
# uninstalled .pc in the build directory (the examples too), then against what
# `meson install --destdir` installs (the .pc, contactd/client.h and contactd/types.h, the .so with its soname), shared and static
# (`pkg-config --static`, with the .so removed), and each program runs one frame against a real
# daemon. TAP output. Arguments: BUILD_DIR SOURCE_DIR CONTACTD PREFIX LIBDIR INCLUDEDIR SANITIZE
# (meson's b_sanitize: a sanitized library needs its runtime in the program too).
set -u
build=$1 src=$2 contactd=$3 prefix=$4 libdir=$5 includedir=$6 sanitize=$7
case $libdir in /*) ;; *) libdir=$prefix/$libdir ;; esac
case $includedir in /*) ;; *) includedir=$prefix/$includedir ;; esac
cc="${CC:-cc} -std=c11 -Wall -Wextra -Werror"
[ "$sanitize" = none ] || cc="$cc -fsanitize=$sanitize"
dir=$(mktemp -d /tmp/contactd-pkgconfig-XXXXXX)
dest=$dir/dest
sock=$dir/contactd.sock
"$contactd" --socket "$sock" --tcp off 2>"$dir/contactd.log" &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$dir"' EXIT
n=0 failed=0
check() { # check DESCRIPTION COMMAND...
  n=$((n + 1)) d=$1; shift
  if "$@" >"$dir/out" 2>&1; then echo "ok $n - $d"; else
    echo "not ok $n - $d"; sed 's/^/# /' "$dir/out"; failed=1; fi
}
echo "1..15"
i=0
while [ ! -S "$sock" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
prog=$src/tests/integration/box_client.c

# Uninstalled: meson-uninstalled/libcontactd-client-uninstalled.pc.
check "the uninstalled .pc resolves" \
  env PKG_CONFIG_PATH="$build/meson-uninstalled" pkg-config --exists libcontactd-client
check "a program builds against the uninstalled .pc" sh -c \
  "$cc '$prog' -o '$dir/box_uninstalled' \
   \$(PKG_CONFIG_PATH='$build/meson-uninstalled' pkg-config --cflags --libs libcontactd-client)"
check "it asks for the default socket without a daemon" \
  env LD_LIBRARY_PATH="$build/clients/c" "$dir/box_uninstalled" -
check "it gets its Result from the daemon" \
  env LD_LIBRARY_PATH="$build/clients/c" "$dir/box_uninstalled" "$sock"
# The examples are such programs too: each builds with a plain cc and the .pc alone.
for ex in demo haptic robot_grasp; do
  check "clients/examples/$ex.c builds with the uninstalled .pc alone" sh -c \
    "$cc '$src/clients/examples/$ex.c' -o '$dir/$ex' \
     \$(PKG_CONFIG_PATH='$build/meson-uninstalled' \
        pkg-config --cflags --libs libcontactd-client) -lm"
done

# Installed into a DESTDIR: the .pc read with the DESTDIR as its sysroot.
check "meson install into a DESTDIR" meson install -C "$build" --no-rebuild --destdir "$dest"
check "the headers, the .pc and the versioned .so are installed" sh -c \
  "test -f '$dest$includedir/contactd/client.h' && test -f '$dest$includedir/contactd/types.h' &&
   test -f '$dest$libdir/pkgconfig/libcontactd-client.pc' &&
   test -L '$dest$libdir/libcontactd-client.so.1' && test -f '$dest$libdir/libcontactd-client.a'"
check "the .so exports the client API only" sh -c \
  "nm -D --defined-only '$dest$libdir/libcontactd-client.so.1' | grep -q ' cdc_frame_send' &&
   ! nm -D --defined-only '$dest$libdir/libcontactd-client.so.1' | grep -q ' cd_'"
check "the .so needs protobuf-c and nothing of the solver or the service" sh -c \
  "readelf -d '$dest$libdir/libcontactd-client.so.1' > '$dir/needed' &&
   grep -q 'NEEDED.*libprotobuf-c' '$dir/needed' &&
   ! grep -Eq 'NEEDED.*(lapack|blas|blis|uv|systemd|inih|cjson|hdf5)' '$dir/needed'"
check "a program builds against the installed .pc" sh -c \
  "$cc '$prog' -o '$dir/box_shared' \
   \$(PKG_CONFIG_PATH='$dest$libdir/pkgconfig' PKG_CONFIG_SYSROOT_DIR='$dest' \
     pkg-config --cflags --libs libcontactd-client)"
check "it runs against the daemon with the installed .so" \
  env LD_LIBRARY_PATH="$dest$libdir" "$dir/box_shared" "$sock"
# Static: the archive alone, with what Requires.private and Libs.private name.
rm -f "$dest$libdir"/libcontactd-client.so*
check "a program links the static library with pkg-config --static" sh -c \
  "$cc '$prog' -o '$dir/box_static' \
   \$(PKG_CONFIG_PATH='$dest$libdir/pkgconfig' PKG_CONFIG_SYSROOT_DIR='$dest' \
     pkg-config --static --cflags --libs libcontactd-client)"
check "it runs against the daemon" "$dir/box_static" "$sock"
[ $failed = 0 ] || cat "$dir/contactd.log" >&2
exit $failed
