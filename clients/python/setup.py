# SPDX-License-Identifier: MIT
"""The build step pyproject.toml cannot state: contactd_pb2 is generated from proto/contactd.proto
with protoc (Debian: protobuf-compiler) into the built package, never into the source tree.
CONTACTD_PROTO names the .proto file when the package is built away from its source tree."""
import os
import shutil
import subprocess

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))


class BuildWithProtoc(build_py):
    """build_py, then protoc --python_out into the built package."""

    def run(self):
        super().run()
        proto = os.environ.get("CONTACTD_PROTO") or os.path.join(HERE, "..", "..", "proto",
                                                                  "contactd.proto")
        protoc = shutil.which("protoc")
        if protoc is None:
            raise SystemExit("contactd: protoc not found on PATH: contactd_pb2 is generated "
                             "from proto/contactd.proto at build time (Debian: apt-get install "
                             "protobuf-compiler)")
        if not os.path.isfile(proto):
            raise SystemExit("contactd: %s not found: build from the contactd source tree, or "
                             "set CONTACTD_PROTO to the path of contactd.proto" % proto)
        out = os.path.join(self.build_lib, "contactd")
        self.mkpath(out)
        subprocess.run([protoc, "--proto_path=" + os.path.dirname(os.path.abspath(proto)),
                        "--python_out=" + out, os.path.abspath(proto)], check=True)


setup(cmdclass={"build_py": BuildWithProtoc})
