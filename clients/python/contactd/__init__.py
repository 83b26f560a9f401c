# SPDX-License-Identifier: MIT
"""Python client of contactd, the real-time contact-force daemon.

    import contactd
    with contactd.Client(socket=path, solver="lemke") as c:      # or tcp="127.0.0.1:7411"
        r = c.solve(contactd.load_scene("tests/data/box_on_plane.json"))
        print(r.status_name, r.forces.sum(axis=0))               # N, world

Client: one session (request or stream mode); solve(), stream(), stats(). Result: an answered
frame with NumPy arrays (lists without NumPy: HAVE_NUMPY). Scene files are contactd.v1.Frame in
proto3 JSON: load_scene, save_scene, parse_scene, scene_to_json. pb: the generated messages.
Errors: ContactdError and its subclasses (DaemonError carries the daemon's code, seq and the
message naming the field)."""
from . import pb
from .client import Client, default_socket
from .errors import (ConnectionClosed, ContactdError, DaemonError, Goodbye, ProtocolError,
                     SessionRefused, Timeout)
from .result import HAVE_NUMPY, Result, vectors
from .scene import (as_frame, load_scene, message_to_dict, parse_scene, save_scene,
                    scene_to_json, set_kinematic)

__version__ = "0.1.0"
__all__ = ["pb", "Client", "default_socket", "ConnectionClosed", "ContactdError", "DaemonError",
           "Goodbye", "ProtocolError", "SessionRefused", "Timeout", "HAVE_NUMPY", "Result",
           "vectors", "as_frame", "load_scene", "message_to_dict", "parse_scene", "save_scene",
           "scene_to_json", "set_kinematic"]
