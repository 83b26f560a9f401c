# SPDX-License-Identifier: MIT
"""python3 -m contactd SCENE.json: sends a scene file to a running daemon and prints the Result
as JSON (exit 0 when STATUS_OK), or with --write rewrites the scene without a daemon.

    python3 -m contactd tests/data/box_on_plane.json
    python3 -m contactd SCENE.json --tcp 127.0.0.1:7411 --token-file TOKEN --solver dantzig
    python3 -m contactd SCENE.json --kinematic 2 --write copy.json   # body 2 driven, no daemon

Exit status: 0 STATUS_OK; 1 another status, or the daemon failed or refused; 2 usage (a
--timeout out of [0, 86400] s among them); 3 a scene, token or output file that cannot be read
or written, or a scene that is not a Frame.
"""
import argparse
import sys

from google.protobuf import json_format

from . import pb
from .client import MAX_TIMEOUT_S, Client, check_timeout, default_socket
from .errors import ContactdError
from .scene import load_scene, save_scene, set_kinematic

_PROG = "python3 -m contactd"


def _timeout(text):
    """--timeout's seconds, or argparse's usage error (one line, exit 2)."""
    try:
        return check_timeout(float(text))
    except ValueError as e:
        raise argparse.ArgumentTypeError("seconds in [0, %d] (0: no limit), not %r"
                                         % (MAX_TIMEOUT_S, text)) from e


def main(argv=None):
    ap = argparse.ArgumentParser(prog=_PROG,
                                 description="Send a scene file to contactd, print the Result.")
    ap.add_argument("scene", help="scene file (contactd.v1.Frame as canonical JSON)")
    ap.add_argument("--socket", help="Unix-domain socket (default: %s)" % default_socket())
    ap.add_argument("--tcp", metavar="HOST:PORT", help="connect over TCP, e.g. 127.0.0.1:7411")
    ap.add_argument("--token-file", metavar="PATH",
                    help="over TCP: present the token on the file's first line")
    ap.add_argument("--solver", default="", help="solver name for the frame (e.g. dantzig)")
    ap.add_argument("--write", metavar="OUT.json", help="write the scene back out and exit")
    ap.add_argument("--kinematic", metavar="ID", type=int, action="append", default=[],
                    help="make body ID kinematic (its velocity prescribed); repeatable")
    ap.add_argument("--timeout", type=_timeout, default=2.0,
                    help="seconds to wait, at most %d (default 2; 0: no limit)" % MAX_TIMEOUT_S)
    a = ap.parse_args(argv)

    try:
        frame = load_scene(a.scene)
    except (OSError, UnicodeDecodeError, json_format.ParseError) as e:
        print("%s: %s: %s" % (_PROG, a.scene, e), file=sys.stderr)
        return 3
    if a.solver:
        frame.solver_name = a.solver
    try:
        for body_id in a.kinematic:
            set_kinematic(frame, body_id)
    except KeyError as e:
        print("%s: --kinematic: %s" % (_PROG, e.args[0]), file=sys.stderr)
        return 2
    token = None
    try:
        if a.write:
            save_scene(frame, a.write)
            return 0
        if a.token_file:
            with open(a.token_file, encoding="utf-8") as f:
                token = f.readline().strip()
    except (OSError, UnicodeDecodeError) as e:
        print("%s: %s" % (_PROG, e), file=sys.stderr)
        return 3
    try:
        # The session is sized for the solvers it declares: the frame's is its default.
        with Client(socket=a.socket, tcp=a.tcp, token=token, solver=a.solver,
                    timeout=a.timeout, name="contactd-py-cli") as c:
            r = c.solve(frame)
    except ContactdError as e:  # before OSError: Timeout and the closed kinds derive from it
        print("%s: %s" % (_PROG, e), file=sys.stderr)
        return 1
    except OSError as e:
        print("%s: %s (is contactd running?)" % (_PROG, e), file=sys.stderr)
        return 1
    print(r.to_json())
    return 0 if r.status == pb.STATUS_OK else 1


if __name__ == "__main__":
    sys.exit(main())
