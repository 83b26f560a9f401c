#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""A small Python client for contactd.

Reads a scene file (a contactd.v1.Frame in the canonical proto3 JSON mapping) with
google.protobuf.json_format, sends it to a running daemon over its Unix-domain socket or TCP,
and prints the Result as JSON. Messages are varint length-prefixed ClientMessage/ServerMessage
envelopes, as in proto/contactd.proto.

The generated module contactd_pb2 is found on PYTHONPATH, else in $CONTACTD_BUILD/proto, else in
build/proto next to the source tree. Use /usr/bin/python3 (Debian's python3-protobuf).

    /usr/bin/python3 clients/python/contactd_client.py tests/data/box_on_plane.json
    /usr/bin/python3 clients/python/contactd_client.py SCENE.json --tcp 127.0.0.1:7411 \
        --solver dantzig
    /usr/bin/python3 clients/python/contactd_client.py SCENE.json --write copy.json   # no daemon
    /usr/bin/python3 clients/python/contactd_client.py SCENE.json --kinematic 2   # body 2 driven
"""
import argparse
import os
import socket
import sys

_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
try:
    import contactd_pb2  # noqa: F401  (on PYTHONPATH)
except ImportError:
    for d in (os.path.join(os.environ.get("CONTACTD_BUILD", ""), "proto"),
              os.path.join(_ROOT, "build", "proto")):
        if os.path.exists(os.path.join(d, "contactd_pb2.py")):
            sys.path.insert(0, d)
            break
    import contactd_pb2
from google.protobuf import json_format

TCP_DEFAULT = "127.0.0.1:7411"


def default_socket():
    """Where a client looks by default: the rule of cd_paths_client_socket (daemon/sys/paths.c)."""
    if os.geteuid() == 0 or os.path.exists("/run/contactd/contactd.sock"):
        return "/run/contactd/contactd.sock"
    xdg = os.environ.get("XDG_RUNTIME_DIR")
    if xdg:
        return os.path.join(xdg, "contactd.sock")
    return "/tmp/contactd-%d.sock" % os.getuid()


def load_scene(path):
    with open(path) as f:
        return json_format.Parse(f.read(), contactd_pb2.Frame())


def save_scene(frame, path):
    with open(path, "w") as f:
        f.write(json_format.MessageToJson(frame) + "\n")


def set_kinematic(frame, body_id):
    """Makes body body_id of frame kinematic: its velocity (as given) is prescribed, so it sends
    no mass and no inertia (the daemon refuses them for a kinematic body)."""
    for b in frame.bodies:
        if b.id == body_id:
            b.kinematic = True
            b.mass = 0
            del b.inertia[:]
            return
    raise KeyError("no body with id %d in the scene" % body_id)


def _varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


class Client:
    """One session: connect, Hello/Welcome, then send frames and receive server messages."""

    def __init__(self, sock_path=None, tcp=None, name="contactd_client.py", solver="",
                 token=None):
        """token: over TCP, the daemon's auth token ([server] auth_token_file)."""
        if tcp:
            host, _, port = tcp.rpartition(":")
            self.sock = socket.create_connection((host.strip("[]"), int(port)))
            self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        else:
            self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            self.sock.connect(sock_path or default_socket())
        self.buf = b""
        hello = contactd_pb2.ClientMessage()
        hello.hello.protocol_version = 1
        hello.hello.client_name = name
        hello.hello.default_solver_name = solver
        if token:
            hello.hello.token = token
        self.send(hello)
        reply = self.recv()
        if reply.WhichOneof("msg") == "error":
            raise RuntimeError("the daemon refused the session: %s" % reply.error.message)
        if reply.WhichOneof("msg") != "welcome":
            raise RuntimeError("expected Welcome, got %s" % json_format.MessageToJson(reply))
        self.welcome = reply.welcome

    def send(self, msg):
        body = msg.SerializeToString()
        self.sock.sendall(_varint(len(body)) + body)

    def send_frame(self, frame):
        msg = contactd_pb2.ClientMessage()
        msg.frame.CopyFrom(frame)
        self.send(msg)

    def recv(self, timeout=None):
        """The next ServerMessage; raises socket.timeout or ConnectionError."""
        self.sock.settimeout(timeout)
        while True:
            n, shift, i = 0, 0, 0
            while i < len(self.buf) and i < 10:
                n |= (self.buf[i] & 0x7F) << shift
                shift += 7
                i += 1
                if not self.buf[i - 1] & 0x80:
                    break
            else:
                i = 0  # prefix incomplete
            if i and len(self.buf) >= i + n:
                msg = contactd_pb2.ServerMessage()
                msg.ParseFromString(self.buf[i:i + n])
                self.buf = self.buf[i + n:]
                return msg
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("contactd closed the connection")
            self.buf += chunk

    def close(self):
        self.sock.close()


def main():
    ap = argparse.ArgumentParser(description="Send a scene file to contactd and print the Result.")
    ap.add_argument("scene", help="scene file (contactd.v1.Frame as canonical JSON)")
    ap.add_argument("--socket", help="Unix-domain socket (default: %s)" % default_socket())
    ap.add_argument("--tcp", metavar="HOST:PORT", help="connect over TCP, e.g. " + TCP_DEFAULT)
    ap.add_argument("--token-file", metavar="PATH",
                    help="over TCP: present the token on the file's first line")
    ap.add_argument("--solver", default="", help="solver name for the frame (e.g. dantzig)")
    ap.add_argument("--write", metavar="OUT.json", help="write the scene back out and exit")
    ap.add_argument("--kinematic", metavar="ID", type=int, action="append", default=[],
                    help="make body ID kinematic (its velocity prescribed); repeatable")
    ap.add_argument("--timeout", type=float, default=2.0, help="seconds to wait (default 2)")
    a = ap.parse_args()

    frame = load_scene(a.scene)
    if a.solver:
        frame.solver_name = a.solver
    try:
        for body_id in a.kinematic:
            set_kinematic(frame, body_id)
    except KeyError as e:
        print("contactd_client.py: --kinematic: %s" % e.args[0], file=sys.stderr)
        return 2
    if a.write:
        save_scene(frame, a.write)
        return 0
    try:
        # The session is sized for the solvers it declares: the frame's is its default.
        token = None
        if a.token_file:
            with open(a.token_file) as f:
                token = f.readline().strip()
        c = Client(a.socket, a.tcp, solver=a.solver, token=token)
    except OSError as e:
        print("contactd_client.py: %s (is contactd running?)" % e, file=sys.stderr)
        return 1
    except RuntimeError as e:
        print("contactd_client.py: %s" % e, file=sys.stderr)
        return 1
    c.send_frame(frame)
    while True:
        m = c.recv(a.timeout)
        kind = m.WhichOneof("msg")
        if kind == "error":
            print("contactd_client.py: daemon error: %s" % m.error.message, file=sys.stderr)
            return 1
        if kind == "goodbye":
            print("contactd_client.py: the daemon ended the session: %s" % m.goodbye.reason,
                  file=sys.stderr)
            return 1
        if kind == "result" and m.result.seq == frame.seq:
            break
    c.close()
    print(json_format.MessageToJson(m.result))
    return 0 if m.result.status == contactd_pb2.STATUS_OK else 1


if __name__ == "__main__":
    sys.exit(main())
