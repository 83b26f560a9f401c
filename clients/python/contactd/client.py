# SPDX-License-Identifier: MIT
"""One session with contactd: connect over its Unix-domain socket or TCP, Hello/Welcome, then
frames out and Results in (proto/contactd.proto; README "Sessions"). Blocking sockets with a
timeout on every wait; a Client is used by one thread at a time."""
import os
import socket as _socket
import time

from google.protobuf.message import DecodeError

from . import pb, wire
from .errors import (ConnectionClosed, DaemonError, Goodbye, ProtocolError, SessionRefused,
                     Timeout)
from .result import Result
from .scene import as_frame

PROTOCOL_VERSION = 1
_MODES = {"request": pb.MODE_REQUEST, "stream": pb.MODE_STREAM}
_LIMITS = ("max_bodies", "max_contacts", "max_friction_directions", "max_message_bytes",
           "max_joints")
# The longest timeout, s: a day, as contactctl's --timeout (a socket's overflows near 3e11 s).
MAX_TIMEOUT_S = 86400


def check_timeout(timeout):
    """timeout when it is None or seconds in [0, MAX_TIMEOUT_S], else ValueError naming them."""
    if timeout is not None and not 0 <= timeout <= MAX_TIMEOUT_S:
        raise ValueError("timeout: seconds in [0, %d] (0 or None: no limit), not %r"
                         % (MAX_TIMEOUT_S, timeout))
    return timeout


def default_socket():
    """Where a client looks by default: the rule of cd_paths_client_socket (proto/wire/paths.c):
    the system daemon's socket when it exists (or as root), else $XDG_RUNTIME_DIR/contactd.sock,
    else /tmp/contactd-UID.sock."""
    if os.geteuid() == 0 or os.path.exists("/run/contactd/contactd.sock"):
        return "/run/contactd/contactd.sock"
    xdg = os.environ.get("XDG_RUNTIME_DIR")
    if xdg:
        return os.path.join(xdg, "contactd.sock")
    return "/tmp/contactd-%d.sock" % os.getuid()


def _split_hostport(tcp):
    host, sep, port = tcp.rpartition(":")
    if not sep or not port.isdigit():
        raise ValueError("tcp: HOST:PORT or [HOST6]:PORT, not %r" % tcp)
    return host.strip("[]"), int(port)


def _error(msg, cls=DaemonError):
    e = msg.error
    return cls(e.code, pb.ErrorCode.Name(e.code) if e.code in pb.ErrorCode.values() else
               str(e.code), e.seq, e.message)


# ERROR_INVALID and ERROR_LIMIT refuse one frame; every other code closes the connection.
_SESSION_GOES_ON = (pb.ERROR_INVALID, pb.ERROR_LIMIT)


class Client:
    """A contactd session.

        with contactd.Client(socket="/run/contactd/contactd.sock", solver="lemke") as c:
            r = c.solve(contactd.load_scene("tests/data/box_on_plane.json"))
            print(r.status_name, r.forces)

    socket: the Unix-domain socket's path (default: default_socket()); tcp: "HOST:PORT" instead.
    mode: "request" (every frame answered as soon as it is solved) or "stream" (the newest frame
    before each tick is solved on the daemon's tick grid). token: over TCP, the daemon's auth
    token ([server] auth_token_file). solver: the session's default solver name ("lemke",
    "dantzig", "sap", ...); solvers: further solvers frames may name. limits: a dict of
    max_bodies, max_contacts, max_friction_directions, max_message_bytes, max_joints (what the
    session is sized for; the daemon may lower them: see welcome.limits). budget_ns: solve time
    per frame (0: the daemon's default). record: ask the daemon to record the session to a file
    (welcome.record_path names it; the daemon must have [record] dir set, else SessionRefused).
    timeout: seconds any one wait may take (connect, Hello, each send and answer; not the lookup
    of a tcp host name, which takes as long as the system's resolver allows); None or 0: no
    limit, every wait as long as it takes (as for receive(), solve() and stats()); at most
    MAX_TIMEOUT_S, a day. A send that times out after part of its message went closes the
    client (see Timeout). Raises ValueError for a timeout out of that range, SessionRefused
    (a DaemonError) when the daemon refuses the Hello, OSError when it cannot be reached, Timeout
    when it does not answer."""

    def __init__(self, socket=None, tcp=None, mode="request", token=None, solver="",
                 solvers=(), limits=None, budget_ns=0, timeout=2.0, name="contactd-python",
                 record=False):
        self._sock = None
        if mode not in _MODES:
            raise ValueError("mode: 'request' or 'stream', not %r" % (mode,))
        if socket and tcp:
            raise ValueError("socket or tcp, not both")
        check_timeout(timeout)
        unknown = set(limits or {}) - set(_LIMITS)
        if unknown:
            raise ValueError("limits: unknown key(s) %s; known: %s"
                             % (", ".join(sorted(unknown)), ", ".join(_LIMITS)))
        self.timeout = timeout
        # The socket's own timeout: 0 would make it non-blocking, not unlimited.
        self._sock_timeout = timeout or None
        self._decoder = wire.Decoder()
        self._seq = 0
        if tcp:
            s = _socket.create_connection(_split_hostport(tcp), timeout=self._sock_timeout)
            s.setsockopt(_socket.IPPROTO_TCP, _socket.TCP_NODELAY, 1)
        else:
            s = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
            s.settimeout(self._sock_timeout)
            try:
                s.connect(socket or default_socket())
            except OSError:
                s.close()
                raise
        self._sock = s
        self.welcome = None
        try:
            self.welcome = self._hello(name, mode, token, solver, solvers, limits or {},
                                       budget_ns, record)
        except BaseException:
            self.close()
            raise

    def _hello(self, name, mode, token, solver, solvers, limits, budget_ns, record):
        m = pb.ClientMessage()
        h = m.hello
        h.protocol_version = PROTOCOL_VERSION
        h.client_name = name
        h.default_solver_name = solver or ""
        h.solvers.extend(solvers)
        h.mode = _MODES[mode]
        h.budget_ns = int(budget_ns)
        for k, v in limits.items():
            setattr(h.limits, k, int(v))
        if token:
            h.token = token
        h.record = bool(record)
        self._send(m)
        timeout, deadline = self._deadline(None)
        reply = self._recv(deadline, timeout)
        kind = reply.WhichOneof("msg")
        if kind == "error":
            raise _error(reply, SessionRefused)
        if kind != "welcome":
            raise ConnectionClosed("expected a Welcome, got a %s" % kind)
        return reply.welcome

    # -- the socket ---------------------------------------------------------------------------

    @property
    def closed(self):
        return self._sock is None

    def close(self):
        """Ends the session (closes the connection). Idempotent."""
        if self._sock is not None:
            self._sock.close()
            self._sock = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        self.close()

    def _send(self, msg):
        """Writes msg within the client's timeout. A Timeout after part of it went closes the
        client: the daemon could not tell where a later message starts."""
        if self._sock is None:
            raise ConnectionClosed("the client is closed")
        data = memoryview(wire.frame_message(msg.SerializeToString()))
        deadline = time.monotonic() + self.timeout if self.timeout else None
        sent = 0
        try:
            while sent < len(data):
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    raise _socket.timeout("timed out")
                self._sock.settimeout(left)
                sent += self._sock.send(data[sent:])
        except _socket.timeout as e:
            if not sent:
                raise Timeout("contactd did not take a message within %s s" % self.timeout) from e
            self.close()
            raise Timeout("contactd took %d of a message's %d bytes within %s s: the client is "
                          "closed (the stream was cut inside a message)"
                          % (sent, len(data), self.timeout)) from e
        except OSError as e:
            self._goodbye_or_closed("sending to contactd failed: %s" % e, e)

    def _goodbye_or_closed(self, what, cause):
        """Raises the Goodbye or the Error that ends the session (SessionRefused before the
        Welcome: a refusal at accept may close the connection before the Hello is written) which
        the daemon left in the socket before it closed, if it did, else ConnectionClosed(what);
        closes the client either way."""
        try:
            self._sock.setblocking(False)
            while True:
                chunk = self._sock.recv(65536)
                if not chunk:
                    break
                self._decoder.feed(chunk)
        except OSError:
            pass  # nothing more to read
        try:
            while True:
                msg = self._next_message()
                if msg is None:
                    break
                kind = msg.WhichOneof("msg")
                if kind == "goodbye":
                    self.close()
                    raise Goodbye(msg.goodbye.reason) from cause
                if kind == "error" and msg.error.code not in _SESSION_GOES_ON:
                    self.close()
                    raise _error(msg, DaemonError if self.welcome else SessionRefused) from cause
        finally:
            self.close()
        raise ConnectionClosed(what) from cause

    def _next_message(self):
        """The next whole ServerMessage received, or None. Bytes that are not one close the
        client and raise ProtocolError."""
        try:
            body = self._decoder.next_body()
            if body is None:
                return None
            msg = pb.ServerMessage()
            msg.ParseFromString(body)
            return msg
        except (ValueError, DecodeError) as e:
            self.close()
            raise ProtocolError("the peer does not speak contactd's protocol: %s" % e) from e

    def _recv(self, deadline, timeout):
        """The next ServerMessage, waiting until deadline (time.monotonic() s; None: forever),
        which the caller set timeout s ahead (for the Timeout's message). A Goodbye raises
        Goodbye and closes the client."""
        while True:
            msg = self._next_message()
            if msg is not None:
                if msg.WhichOneof("msg") == "goodbye":
                    self.close()
                    raise Goodbye(msg.goodbye.reason)
                return msg
            if self._sock is None:
                raise ConnectionClosed("the client is closed")
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                raise Timeout("no answer from contactd within %s s" % timeout)
            self._sock.settimeout(left)
            try:
                chunk = self._sock.recv(65536)
            except _socket.timeout:
                continue  # the deadline check above raises
            except OSError as e:
                self.close()
                raise ConnectionClosed("reading from contactd failed: %s" % e) from e
            if not chunk:
                self.close()
                raise ConnectionClosed("contactd closed the connection")
            self._decoder.feed(chunk)

    def _deadline(self, timeout):
        """A wait's timeout (None: the client's), in the client's range (check_timeout), and its
        deadline (time.monotonic() s; None: no limit)."""
        timeout = self.timeout if timeout is None else check_timeout(timeout)
        return timeout, (time.monotonic() + timeout if timeout else None)

    def _raise_error(self, msg):
        err = _error(msg)
        if err.code not in _SESSION_GOES_ON:
            self.close()
        raise err

    # -- the session --------------------------------------------------------------------------

    def send(self, frame):
        """Sends one frame (a Frame, a dict in the JSON mapping, or scene JSON text) without
        waiting. Every frame on a session gets a new seq, so each answer is told apart: the
        frame's own when it is above every seq sent before, else (a scene file sent again, seq
        0) the next one, set on the copy that is sent. Returns the seq sent."""
        frame = as_frame(frame)
        m = pb.ClientMessage()
        m.frame.CopyFrom(frame)
        self._seq = frame.seq if frame.seq > self._seq else self._seq + 1
        m.frame.seq = self._seq
        self._send(m)
        return m.frame.seq

    def receive(self, seq, timeout=None):
        """The Result of frame seq, skipping Results of earlier frames (late answers after a
        Timeout, stream ticks). Raises DaemonError for an Error from the daemon (its seq says
        which frame), Goodbye, ConnectionClosed, or Timeout after timeout s (default None: the
        client's; 0: no limit), ValueError for a timeout out of the client's range."""
        timeout, deadline = self._deadline(timeout)
        while True:
            msg = self._recv(deadline, timeout)
            kind = msg.WhichOneof("msg")
            if kind == "result" and msg.result.seq == seq:
                return Result(msg.result)
            if kind == "error" and msg.error.seq in (0, seq):
                self._raise_error(msg)
            # Anything else answers an earlier request: a late Result or Error, or Stats.

    def solve(self, frame, timeout=None):
        """Sends frame and returns its Result (contactd.Result). In stream mode the frame is
        answered at the next tick. Raises as receive() does (a bad timeout before the frame is
        sent)."""
        check_timeout(timeout)
        return self.receive(self.send(frame), timeout)

    def stream(self, frames, timeout=None):
        """A generator of Results, one per frame of the iterable frames: each frame is sent when
        the previous one's Result is in (a controller's loop: nothing is superseded, and request
        mode stays within its rate when the frames come no faster than the tick rate). The
        frames may be produced lazily, e.g. from the previous Result."""
        for frame in frames:
            yield self.solve(frame, timeout)

    def stats(self, session_id=0, timeout=None):
        """The daemon's Stats message (contactd.v1.Stats): its counters and histograms, with
        this session's (request mode: only its own) in session_stats. Results that arrive
        while waiting for it (frames sent with send() and not yet received) are dropped.
        timeout as for receive()."""
        m = pb.ClientMessage()
        m.stats_request.session_id = session_id
        timeout, deadline = self._deadline(timeout)
        self._send(m)
        while True:
            msg = self._recv(deadline, timeout)
            kind = msg.WhichOneof("msg")
            if kind == "stats":
                return msg.stats
            if kind == "error" and msg.error.seq == 0:
                self._raise_error(msg)
