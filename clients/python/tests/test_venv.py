# SPDX-License-Identifier: MIT
"""The package as a user installs it: a venv made with --system-site-packages (protobuf and
NumPy from Debian's python3-protobuf and python3-numpy), `pip install --no-build-isolation`
with no package index, then an import from the venv and one solve against the daemon built here.
Also: the build generates contactd_pb2 into the installed package and leaves none in the source,
and without protoc on PATH the build fails naming protoc. The package is built from a copy of
clients/python and proto/ (setuptools builds in the tree it is given; the tests leave the source
tree alone). Exit 77 (skip) when python3-venv or pip is missing. Exit status: 0 ok, 1 failed."""
import json
import os
import shutil
import subprocess
import sys
import tempfile

from daemon import TIMEOUT_S, Daemon

HERE = os.path.dirname(os.path.abspath(__file__))
PKG = os.path.dirname(HERE)                         # clients/python
ROOT = os.path.dirname(os.path.dirname(PKG))        # the source tree
BOX = os.path.join(ROOT, "tests", "data", "box_on_plane.json")
PYTHON = "/usr/bin/python3"

SOLVE = """
import sys, contactd
assert contactd.__file__.startswith(sys.prefix), contactd.__file__
with contactd.Client(socket=sys.argv[1], timeout=float(sys.argv[-1])) as c:
    for _ in range(5):  # past a deadline missed on a loaded machine
        r = c.solve(contactd.load_scene(sys.argv[2]))
        if r.ok or r.timing.deadline_met:
            break
print(r.status_name, sum(f[2] for f in r.forces), type(r.forces).__module__)
"""


def fail(what, p=None):
    print("FAIL: %s" % what)
    if p is not None:
        print(p.stdout, p.stderr, sep="\n")
    sys.exit(1)


def main():
    probe = subprocess.run([PYTHON, "-c", "import venv, ensurepip"], capture_output=True)
    if probe.returncode != 0:
        print("SKIP: %s has no venv/ensurepip (Debian: python3-venv)" % PYTHON)
        return 77
    tmp = tempfile.mkdtemp(prefix="contactd-py-venv-")
    try:
        src = os.path.join(tmp, "src")
        shutil.copytree(PKG, os.path.join(src, "clients", "python"),
                        ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__",
                                                      "tests"))
        shutil.copytree(os.path.join(ROOT, "proto"), os.path.join(src, "proto"),
                        ignore=shutil.ignore_patterns("*.c", "*.h", "meson.build"))
        venv = os.path.join(tmp, "venv")
        p = subprocess.run([PYTHON, "-m", "venv", "--system-site-packages", venv],
                           capture_output=True, text=True)
        if p.returncode != 0:
            fail("python3 -m venv --system-site-packages", p)
        vpy = os.path.join(venv, "bin", "python")
        # The venv's own packages only (meson's PYTHONPATH names the build tree's).
        clean = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        if subprocess.run([vpy, "-m", "pip", "--version"], capture_output=True,
                          env=clean).returncode:
            print("SKIP: the venv has no pip (Debian: python3-pip, python3-venv)")
            return 77
        pip = [vpy, "-m", "pip", "install", "--no-build-isolation", "--no-index",
               os.path.join(src, "clients", "python")]
        # Without protoc the build stops and says what is missing.
        env = dict(clean, PATH=os.path.join(tmp, "empty"))
        p = subprocess.run(pip, capture_output=True, text=True, env=env)
        if p.returncode == 0 or "protoc not found" not in p.stdout + p.stderr:
            fail("pip install without protoc on PATH should fail naming protoc", p)
        p = subprocess.run(pip, capture_output=True, text=True, env=clean)
        if p.returncode != 0:
            fail("pip install --no-build-isolation clients/python", p)
        print("ok: pip install --no-build-isolation --no-index clients/python")
        generated = [os.path.join(dp, f) for dp, _, fs in os.walk(os.path.join(src, "clients"))
                     for f in fs if f == "contactd_pb2.py" and "/build/" not in dp + "/"]
        if generated:
            fail("contactd_pb2.py generated into the source tree: %s" % generated)
        d = Daemon()
        try:
            p = subprocess.run([vpy, "-c", SOLVE, d.socket, BOX, str(TIMEOUT_S)],
                               capture_output=True, text=True, cwd=tmp, env=clean, timeout=60)
        finally:
            d.stop()
        if p.returncode != 0:
            fail("import contactd from the venv and solve", p)
        status, fz, arrays = p.stdout.split()
        # The box rests: its contacts carry its weight.
        with open(BOX, encoding="utf-8") as f:
            scene = json.load(f)
        weight = sum(b["mass"] for b in scene["bodies"]) * -scene["gravity"]["z"]
        if status != "STATUS_OK" or abs(float(fz) - weight) > 1e-9 * weight or arrays != "numpy":
            fail("the venv's solve: %s" % p.stdout)
        print("ok: the venv imports contactd and solves: %s N, NumPy arrays" % fz)
        return 0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
