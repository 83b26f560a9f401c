# SPDX-License-Identifier: MIT
"""The generated messages of proto/contactd.proto (Frame, Body, Contact, Vec3, Result, Stats,
...) and their enum values (STATUS_OK, MODE_REQUEST, ERROR_INVALID, ...). contactd_pb2 is
generated at build time, by meson into build/clients/python/contactd and by pip's build step
into the installed package; it is never part of the source tree."""
try:
    from .contactd_pb2 import *  # noqa: F401,F403  (the schema's names, as protoc makes them)
except ImportError as e:
    if e.name and e.name.startswith("google"):
        raise ImportError("contactd needs protobuf's Python runtime (Debian: python3-protobuf)",
                          name=e.name) from e
    raise ImportError(
        "contactd: the generated contactd_pb2 is missing (it is built from proto/contactd.proto):"
        " import the package from build/clients/python after `meson compile`, or install it "
        "with `pip install --no-build-isolation clients/python`", name=__name__) from e
