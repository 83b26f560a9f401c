# SPDX-License-Identifier: MIT
"""`meson install` of the package (install tag python) into a DESTDIR: the sources and the
generated contactd_pb2 land in a directory /usr/bin/python3 searches when the prefix is one of
its own (/usr/local, /usr), and the installed copy imports and solves against the daemon built
here. Arguments: BUILD_DIR PACKAGE_DIR (where meson installs contactd/). Exit status: 0 ok,
1 failed."""
import os
import shutil
import site
import subprocess
import sys
import tempfile

from daemon import TIMEOUT_S, Daemon

BOX = os.path.join(os.environ.get("CONTACTD_DATA", ""), "box_on_plane.json")
SOLVE = """
import sys, contactd
assert contactd.__file__.startswith(sys.argv[3]), contactd.__file__
with contactd.Client(socket=sys.argv[1], timeout=float(sys.argv[-1])) as c:
    for _ in range(5):  # past a deadline missed on a loaded machine
        r = c.solve(contactd.load_scene(sys.argv[2]))
        if r.ok or r.timing.deadline_met:
            break
print(r.status_name)
"""


def main(build, pkg_dir):
    site_dir = os.path.dirname(pkg_dir)
    searched = site.getsitepackages()
    if site_dir.startswith(("/usr/local/", "/usr/lib/")) and site_dir not in searched:
        print("FAIL: %s is not among /usr/bin/python3's site directories %s"
              % (site_dir, searched))
        return 1
    dest = tempfile.mkdtemp(prefix="contactd-py-install-")
    try:
        p = subprocess.run(["meson", "install", "-C", build, "--no-rebuild", "--tags", "python",
                            "--destdir", dest], capture_output=True, text=True)
        if p.returncode != 0:
            print("FAIL: meson install --tags python\n%s%s" % (p.stdout, p.stderr))
            return 1
        root = dest + site_dir
        names = sorted(os.listdir(os.path.join(root, "contactd")))
        for need in ("__init__.py", "client.py", "contactd_pb2.py"):
            if need not in names:
                print("FAIL: %s missing from %s/contactd: %s" % (need, root, names))
                return 1
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        env["PYTHONPATH"] = root
        d = Daemon()
        try:
            p = subprocess.run([sys.executable, "-c", SOLVE, d.socket, BOX, root,
                                str(TIMEOUT_S)], capture_output=True, text=True, env=env,
                               cwd=dest, timeout=60)
        finally:
            d.stop()
        if p.returncode != 0 or p.stdout.strip() != "STATUS_OK":
            print("FAIL: the installed package's solve\n%s%s" % (p.stdout, p.stderr))
            return 1
        print("ok: meson install put contactd in %s (%d files); it imports and solves"
              % (site_dir, len(names)))
        return 0
    finally:
        shutil.rmtree(dest, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
