# SPDX-License-Identifier: MIT
"""The contactd package against the daemon built here, over its Unix socket and TCP: statics of
the test scenes, an Error naming the field, stream mode, Stats, the TCP token, Goodbye, timeouts,
NumPy arrays and the path without NumPy, scene JSON both ways, the command line; and the framing
alone. CONTACTD_EXE: the daemon; CONTACTD_DATA: tests/data. Run: python3 -m unittest."""
import contextlib
import glob
import json
import math
import os
import socket
import subprocess
import sys
import tempfile
import unittest

import contactd
from contactd import pb, wire
from daemon import TIMEOUT_S, Daemon

DATA = os.environ.get("CONTACTD_DATA") or os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "tests", "data")
BOX = os.path.join(DATA, "box_on_plane.json")
DAEMON = None


def setUpModule():
    global DAEMON
    DAEMON = Daemon()


def tearDownModule():
    DAEMON.stop()


def weight(frame):
    """m g of the scene's dynamic bodies, N (gravity's magnitude)."""
    g = math.sqrt(frame.gravity.x ** 2 + frame.gravity.y ** 2 + frame.gravity.z ** 2)
    return sum(b.mass for b in frame.bodies) * g


@contextlib.contextmanager
def unix_listener(name):
    """(path, srv): a Unix socket listening at a new temporary path, whose accept gives up after
    TIMEOUT_S; closed on leaving."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, name)
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as srv:
            srv.bind(path)
            srv.listen(1)
            srv.settimeout(TIMEOUT_S)
            yield path, srv


LABELLED_MISS = ("STATUS_DEADLINE", "STATUS_FAILED")


def solve_ok(test, c, frame, tries=5):
    """frame's Result, the frame sent again while its answer is a labelled deadline miss: a
    loaded machine may make a frame miss its deadline (tests/integration/it_solve.c does the
    same). Any other answer than STATUS_OK fails the test."""
    for _ in range(tries):
        r = c.solve(frame)
        if r.ok:
            return r
        test.assertFalse(r.timing.deadline_met, "%s: %s" % (r.status_name, r.detail))
        test.assertIn(r.status_name, LABELLED_MISS, r.detail)
        test.assertNotEqual(r.timing.miss_reason, pb.MISS_NONE)
    test.fail("%d deadline misses in a row" % tries)


def column_sums(rows):
    return [sum(r[i] for r in rows) for i in range(3)]


class BoxOnPlane:
    """Checks shared by the Unix-socket and TCP sessions; address() says where to connect."""

    def connect(self, **kw):
        raise NotImplementedError

    def test_normal_forces_carry_the_weight(self):
        frame = contactd.load_scene(BOX)
        with self.connect() as c:
            r = solve_ok(self, c, frame)
        self.assertEqual(r.status_name, "STATUS_OK")
        self.assertEqual(r.contact_ids, [ct.id for ct in frame.contacts])
        fx, fy, fz = column_sums([tuple(f) for f in r.forces])
        self.assertAlmostEqual(fz, weight(frame), delta=1e-9 * weight(frame))
        self.assertAlmostEqual(fx, 0, delta=1e-9)
        self.assertAlmostEqual(fy, 0, delta=1e-9)
        # Normal impulses over dt carry the weight too; the body comes to rest.
        self.assertAlmostEqual(sum(r.normal_impulses) / frame.dt, weight(frame),
                               delta=1e-9 * weight(frame))
        lin, _ = r.body_velocity(1)
        self.assertLess(max(abs(v) for v in lin), 1e-9)

    def test_a_penetration_opens_by_the_fraction_asked(self):
        frame = contactd.load_scene(BOX)
        for ct in frame.contacts:
            ct.distance = -1e-4
        frame.penetration_recovery = 0.5
        with self.connect() as c:
            r = solve_ok(self, c, frame)
        lin, _ = r.body_velocity(1)
        self.assertAlmostEqual(lin[2], 0.5 * 1e-4 / frame.dt, delta=1e-9)
        frame.penetration_recovery = 1.5
        with self.connect() as c:
            with self.assertRaises(contactd.DaemonError) as e:
                c.solve(frame)
        self.assertEqual(e.exception.code, pb.ERROR_INVALID)
        self.assertTrue(e.exception.message.startswith("penetration_recovery"),
                        e.exception.message)

    def test_a_frame_seq_is_echoed_and_repeats_renumbered(self):
        frame = contactd.load_scene(BOX)
        with self.connect() as c:
            first, second = c.solve(frame), c.solve(frame)
        self.assertEqual(first.seq, frame.seq)
        self.assertEqual(second.seq, frame.seq + 1)
        self.assertEqual(frame.seq, 1)  # the caller's frame is not touched


class UnixSession(BoxOnPlane, unittest.TestCase):
    def connect(self, **kw):
        return contactd.Client(socket=DAEMON.socket, timeout=TIMEOUT_S, **kw)

    def test_incline_sticks_at_mu_05_and_slides_at_mu_02(self):
        with self.connect() as c:
            stick_frame = contactd.load_scene(os.path.join(DATA, "box_on_incline_stick.json"))
            slide_frame = contactd.load_scene(os.path.join(DATA, "box_on_incline_slide.json"))
            stick = solve_ok(self, c, stick_frame)
            slide = solve_ok(self, c, slide_frame)
        loaded = [i for i, n in enumerate(stick.normal_impulses) if n > 1e-9]
        self.assertTrue(loaded)
        self.assertTrue(all(stick.states[i] == "STATE_STICK" for i in loaded), stick.states)
        loaded = [i for i, n in enumerate(slide.normal_impulses) if n > 1e-9]
        self.assertTrue(loaded)
        self.assertTrue(all(slide.states[i] == "STATE_SLIDE" for i in loaded), slide.states)
        # A sliding contact's friction is on its cone: |lambda_t| = mu lambda_n (8-sided pyramid
        # of the pivoting solver: within cos(pi/8) of the cone).
        for i in loaded:
            mu = slide_frame.contacts[i].friction
            ratio = slide.tangent_impulses[i] / (mu * slide.normal_impulses[i])
            self.assertTrue(math.cos(math.pi / 8) - 1e-9 <= ratio <= 1 + 1e-9, ratio)

    def test_bad_input_gets_an_error_naming_the_field(self):
        bad = contactd.load_scene(BOX)
        bad.contacts[0].normal.z = 0.5
        with self.connect() as c:
            seq = c.send(bad)
            with self.assertRaises(contactd.DaemonError) as e:
                c.receive(seq)
            self.assertEqual(e.exception.code, pb.ERROR_INVALID)
            self.assertEqual(e.exception.code_name, "ERROR_INVALID")
            self.assertEqual(e.exception.seq, seq)
            self.assertTrue(e.exception.message.startswith("contacts[0].normal"),
                            e.exception.message)
            # The session goes on.
            solve_ok(self, c, contactd.load_scene(BOX))

    def test_stats_count_this_session(self):
        bad = contactd.load_scene(BOX)
        bad.bodies[0].mass = -1
        with self.connect() as c:
            for _ in range(3):
                c.solve(contactd.load_scene(BOX))
            with self.assertRaises(contactd.DaemonError) as e:
                c.solve(bad)
            self.assertIn("bodies[0].mass", e.exception.message)
            s = c.stats()
        self.assertIsInstance(s, pb.Stats)
        self.assertGreaterEqual(s.frames_received, 4)
        self.assertEqual(len(s.session_stats), 1)  # request mode: its own only
        own = s.session_stats[0]
        self.assertEqual(own.session_id, c.welcome.session_id)
        self.assertEqual(own.mode, pb.MODE_REQUEST)
        # A refused frame is counted as refused, not as received.
        self.assertEqual(own.frames_received, 3)
        self.assertEqual(own.frames_solved, 3)
        self.assertEqual(own.frames_refused, 1)

    def test_stream_mode_answers_every_frame_on_later_ticks(self):
        base = contactd.load_scene(BOX)

        def frames():
            for _ in range(20):
                yield base

        with self.connect(mode="stream", solver="lemke") as c:
            self.assertEqual(c.welcome.mode, pb.MODE_STREAM)
            results = list(c.stream(frames()))
        self.assertEqual([r.seq for r in results], list(range(1, 21)))
        ticks = [r.tick for r in results]
        self.assertTrue(all(a < b for a, b in zip(ticks, ticks[1:])), ticks)
        for r in results:
            if r.ok:
                self.assertAlmostEqual(sum(f[2] for f in r.forces), weight(base),
                                       delta=1e-6 * weight(base))
            else:  # not OK only past the deadline (it_stream.c): labelled, with its reason
                self.assertFalse(r.timing.deadline_met, r.detail)
                self.assertIn(r.status_name, LABELLED_MISS, r.detail)
                self.assertNotEqual(r.timing.miss_reason, pb.MISS_NONE)

    def test_hello_names_the_limits_and_solver(self):
        with self.connect(solver="sap", solvers=["dantzig", "ncp"], budget_ns=500000,
                          limits={"max_bodies": 3, "max_contacts": 8}) as c:
            w = c.welcome
            self.assertEqual(w.default_solver_name, "sap")
            self.assertEqual(list(w.solvers), ["sap", "dantzig", "ncp"])
            self.assertEqual((w.limits.max_bodies, w.limits.max_contacts), (3, 8))
            self.assertEqual(w.budget_ns, 500000)
            frame = contactd.load_scene(BOX)
            for name in ("dantzig", "ncp"):
                frame.solver_name = name
                self.assertEqual(solve_ok(self, c, frame).stats.solver, name)
        with self.assertRaises(ValueError):
            self.connect(limits={"max_bodys": 3})

    def test_frames_as_dicts_and_json_text(self):
        frame = contactd.load_scene(BOX)
        with self.connect() as c:
            a = solve_ok(self, c, frame)
            b = solve_ok(self, c, contactd.message_to_dict(frame))
            d = solve_ok(self, c, contactd.scene_to_json(frame))
        self.assertEqual([tuple(f) for f in a.forces], [tuple(f) for f in b.forces])
        self.assertEqual([tuple(f) for f in a.forces], [tuple(f) for f in d.forces])

    def test_result_json_round_trip(self):
        with self.connect() as c:
            r = solve_ok(self, c, contactd.load_scene(BOX))
        back = pb.Result()
        from google.protobuf import json_format
        json_format.Parse(r.to_json(), back)
        self.assertEqual(back, r.message)
        self.assertEqual(json.loads(r.to_json())["status"], "STATUS_OK")

    @unittest.skipUnless(contactd.HAVE_NUMPY, "NumPy is not installed (python3-numpy)")
    def test_numpy_arrays(self):
        import numpy as np
        frame = contactd.load_scene(BOX)
        with self.connect() as c:
            r = solve_ok(self, c, frame)
        nc = len(frame.contacts)
        for arr in (r.forces, r.impulses):
            self.assertIsInstance(arr, np.ndarray)
            self.assertEqual((arr.shape, arr.dtype), ((nc, 3), np.float64))
        self.assertEqual(r.normal_impulses.shape, (nc,))
        for i, ct in enumerate(r.message.contacts):
            self.assertEqual(tuple(r.forces[i]), (ct.force.x, ct.force.y, ct.force.z))
            self.assertEqual(r.impulses[i, 0], ct.impulse.x)
        np.testing.assert_allclose(r.forces.sum(axis=0), [0, 0, weight(frame)], atol=1e-9)
        # The world force is the contact-frame impulse turned into the world, over dt.
        self.assertAlmostEqual(float(np.linalg.norm(r.forces, axis=1).sum()),
                               float(np.linalg.norm(r.impulses, axis=1).sum()) / frame.dt,
                               delta=1e-9)
        self.assertEqual(r.joint_forces.shape, (0, 3))

    def test_without_numpy_plain_tuples(self):
        # A fresh interpreter where `import numpy` fails, as on a system without python3-numpy.
        code = ("import sys; sys.modules['numpy'] = None\n"
                "import contactd\n"
                "assert not contactd.HAVE_NUMPY\n"
                "with contactd.Client(socket=sys.argv[1], timeout=float(sys.argv[3])) as c:\n"
                "    for _ in range(5):  # past a deadline missed on a loaded machine\n"
                "        r = c.solve(contactd.load_scene(sys.argv[2]))\n"
                "        if r.ok or r.timing.deadline_met:\n"
                "            break\n"
                "assert r.ok, r.status_name\n"
                "assert isinstance(r.forces, list) and isinstance(r.forces[0], tuple), r.forces\n"
                "assert all(len(f) == 3 for f in r.forces)\n"
                "print(sum(f[2] for f in r.forces), sum(r.normal_impulses))\n")
        out = subprocess.run([sys.executable, "-c", code, DAEMON.socket, BOX, str(TIMEOUT_S)],
                             check=True, capture_output=True, text=True,
                             timeout=60).stdout.split()
        frame = contactd.load_scene(BOX)
        self.assertAlmostEqual(float(out[0]), weight(frame), delta=1e-9 * weight(frame))
        self.assertAlmostEqual(float(out[1]) / frame.dt, weight(frame),
                               delta=1e-9 * weight(frame))

    def test_command_line(self):
        run = [sys.executable, "-m", "contactd"]
        p = subprocess.run(run + [BOX, "--socket", DAEMON.socket, "--timeout", str(TIMEOUT_S)],
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(json.loads(p.stdout)["status"], "STATUS_OK")
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "kinematic.json")
            subprocess.run(run + [BOX, "--kinematic", "1", "--write", out], check=True,
                           timeout=30)
            body = contactd.load_scene(out).bodies[0]
            self.assertTrue(body.kinematic)
            self.assertEqual((body.mass, len(body.inertia)), (0, 0))
        p = subprocess.run(run + [BOX, "--kinematic", "9", "--write", "/dev/null"],
                           capture_output=True, text=True, timeout=30)
        self.assertEqual(p.returncode, 2)
        self.assertIn("no body with id 9", p.stderr)
        # A timeout out of range is a usage error naming the option, not a traceback.
        for t in ("-1", "nan", "1e300", "x"):
            p = subprocess.run(run + [BOX, "--socket", DAEMON.socket, "--timeout", t],
                               capture_output=True, text=True, timeout=30)
            self.assertEqual(p.returncode, 2, p.stderr)
            self.assertNotIn("Traceback", p.stderr)
            self.assertIn("--timeout", p.stderr)

    def test_command_line_on_unreadable_files(self):
        # A missing or malformed scene, a missing token file: one line naming it, exit 3, no
        # traceback.
        run = [sys.executable, "-m", "contactd"]
        with tempfile.TemporaryDirectory() as tmp:
            bad = os.path.join(tmp, "bad.json")
            with open(bad, "w", encoding="utf-8") as f:
                f.write('{"dt": 0.001,')
            missing = os.path.join(tmp, "missing")
            for args, needle in (([missing + ".json"], "missing.json"), ([bad], "bad.json"),
                                 ([BOX, "--tcp", "127.0.0.1:1", "--token-file", missing],
                                  "missing")):
                p = subprocess.run(run + args, capture_output=True, text=True, timeout=30)
                self.assertEqual(p.returncode, 3, p.stderr)
                self.assertNotIn("Traceback", p.stderr)
                self.assertIn(needle, p.stderr)


class TcpSession(BoxOnPlane, unittest.TestCase):
    def connect(self, **kw):
        return contactd.Client(tcp=DAEMON.tcp, timeout=TIMEOUT_S, **kw)


class Token(unittest.TestCase):
    """[server] auth_token_file with tcp_allow_any_local_user = no: TCP needs the token."""
    TOKEN = "s3cret-token-of-the-python-test-0123456789"

    @classmethod
    def setUpClass(cls):
        fd, cls.token_file = tempfile.mkstemp(prefix="contactd-py-token-")
        os.write(fd, (cls.TOKEN + "\n").encode())
        os.close(fd)
        cls.daemon = Daemon("[server]\nauth_token_file = %s\ntcp_allow_any_local_user = no\n"
                            % cls.token_file)

    @classmethod
    def tearDownClass(cls):
        cls.daemon.stop()
        os.unlink(cls.token_file)

    def test_no_token_or_a_wrong_one_is_refused_naming_the_field(self):
        for token in (None, self.TOKEN[:-1] + "8"):
            with self.assertRaises(contactd.SessionRefused) as e:
                contactd.Client(tcp=self.daemon.tcp, token=token, timeout=TIMEOUT_S)
            self.assertEqual(e.exception.code, pb.ERROR_DENIED)
            self.assertIn("hello.token", e.exception.message)

    def test_the_token_opens_a_tcp_session(self):
        with contactd.Client(tcp=self.daemon.tcp, token=self.TOKEN,
                             timeout=TIMEOUT_S) as c:
            solve_ok(self, c, contactd.load_scene(BOX))

    def test_the_unix_socket_needs_none(self):
        with contactd.Client(socket=self.daemon.socket, timeout=TIMEOUT_S) as c:
            solve_ok(self, c, contactd.load_scene(BOX))


class Refusal(unittest.TestCase):
    def test_a_refusal_before_the_hello_went_is_session_refused(self):
        # The daemon refuses the connection at accept and closes it; a Hello bigger than the
        # socket holds unread is still being written then, so its send fails (EPIPE) with the
        # daemon's Error waiting in the socket: that Error is what the client raises.
        d = Daemon("[server]\nmax_connections_per_uid = 1\n")
        held = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            held.connect(d.socket)
            with self.assertRaises(contactd.SessionRefused) as e:
                contactd.Client(socket=d.socket, name="n" * (1 << 20), timeout=TIMEOUT_S)
            self.assertEqual(e.exception.code_name, "ERROR_BUSY")
            self.assertIn("max_connections_per_uid", e.exception.message)
        finally:
            held.close()
            d.stop()


class Record(unittest.TestCase):
    """Client(record=True) against a daemon with [record] dir set, and one with recording off."""

    def test_a_recorded_session_writes_its_frames_and_results(self):
        rec_dir = tempfile.mkdtemp(prefix="contactd-py-rec-")
        d = Daemon("[record]\ndir = %s\n" % rec_dir)
        try:
            frame = contactd.load_scene(BOX)
            with contactd.Client(socket=d.socket, record=True, timeout=TIMEOUT_S) as c:
                path = c.welcome.record_path
                self.assertTrue(path.startswith(rec_dir), path)
                for _ in range(3):
                    solve_ok(self, c, frame)
        finally:
            d.stop()
        dec = wire.Decoder()
        with open(path, "rb") as f:
            dec.feed(f.read())
        kinds = []
        while True:
            body = dec.next_body()
            if body is None:
                break
            e = pb.RecordEntry()
            e.ParseFromString(body)
            kinds.append(e.WhichOneof("entry"))
        self.assertEqual(kinds[0], "header")
        self.assertGreaterEqual(kinds.count("client"), 3)
        self.assertEqual(kinds.count("client"), kinds.count("server"))
        for name in os.listdir(rec_dir):
            os.unlink(os.path.join(rec_dir, name))
        os.rmdir(rec_dir)

    def test_recording_off_refuses_naming_the_key(self):
        with self.assertRaises(contactd.SessionRefused) as e:
            contactd.Client(socket=DAEMON.socket, record=True, timeout=TIMEOUT_S)
        self.assertIn("[record] dir", e.exception.message)


class Goodbye(unittest.TestCase):
    def test_sigterm_ends_the_session_with_a_goodbye(self):
        d = Daemon()
        try:
            req = contactd.Client(socket=d.socket, timeout=TIMEOUT_S)
            stream = contactd.Client(tcp=d.tcp, mode="stream", timeout=TIMEOUT_S)
            solve_ok(self, req, contactd.load_scene(BOX))
            self.assertEqual(d.terminate(), 0)
            for c in (req, stream):
                with self.assertRaises(contactd.Goodbye) as e:
                    c.solve(contactd.load_scene(BOX))
                self.assertTrue(e.exception.reason)
                self.assertTrue(c.closed)
                with self.assertRaises(contactd.ConnectionClosed):
                    c.solve(contactd.load_scene(BOX))
        finally:
            d.stop()


class Timeouts(unittest.TestCase):
    def test_a_silent_peer_times_out(self):
        # A listener that accepts and never answers the Hello.
        with unix_listener("silent.sock") as (path, _):
            with self.assertRaises(contactd.Timeout) as e:
                contactd.Client(socket=path, timeout=0.2)
            self.assertIsInstance(e.exception, TimeoutError)

    def test_a_peer_of_another_protocol_is_a_protocol_error(self):
        # Another service at the address: an undecodable message, a malformed length prefix.
        # Each is a ContactdError that closes the client, not protobuf's or the framing's own.
        import threading
        for reply in (b"\x05\xff\xff\xff\xff\xff", b"\xff" * 12):
            # The peer gives up when no client comes (one that failed before connecting: the
            # listener's timeout) and, a daemon thread, cannot keep the run from ending whatever
            # it waits for.
            with unix_listener("other.sock") as (path, srv):
                def answer():
                    peer, _ = srv.accept()
                    peer.settimeout(TIMEOUT_S)
                    with peer:
                        peer.recv(4096)
                        peer.sendall(reply)
                        peer.recv(1)  # until the client closes
                t = threading.Thread(target=answer, daemon=True)
                t.start()
                try:
                    with self.assertRaises(contactd.ProtocolError) as e:
                        contactd.Client(socket=path, timeout=TIMEOUT_S)
                    self.assertIsInstance(e.exception, contactd.ContactdError)
                finally:
                    t.join(TIMEOUT_S)

    def test_a_send_cut_by_its_timeout_closes_the_client(self):
        # A peer that welcomes the client and then reads nothing: a frame several times what
        # the socket holds goes in part, then times out. The stream is cut inside a message,
        # so the client is closed and the peer reads the end of the stream after the cut.
        import threading
        with unix_listener("mute.sock") as (path, srv):
            welcomed = []

            def welcome():
                peer, _ = srv.accept()
                peer.recv(4096)
                m = pb.ServerMessage()
                m.welcome.session_id = 1
                peer.sendall(wire.frame_message(m.SerializeToString()))
                welcomed.append(peer)
            t = threading.Thread(target=welcome, daemon=True)
            t.start()
            c = contactd.Client(socket=path, timeout=0.5)
            t.join(TIMEOUT_S)
            frame = pb.Frame(dt=1e-3)
            for i in range(10000):
                b = frame.bodies.add(id=i + 1, mass=1.0, inertia=[0.1, 0, 0, 0, 0.1, 0, 0, 0,
                                                                   0.1])
                b.position.x, b.orientation.w = float(i), 1.0
            with self.assertRaises(contactd.Timeout) as e:
                c.send(frame)
            self.assertIn("closed", str(e.exception))
            self.assertTrue(c.closed)
            with self.assertRaises(contactd.ConnectionClosed):
                c.send(contactd.load_scene(BOX))
            peer = welcomed[0]
            peer.settimeout(TIMEOUT_S)
            got = 0
            while True:
                chunk = peer.recv(65536)
                if not chunk:
                    break
                got += len(chunk)
            self.assertGreater(got, 0)
            peer.close()

    def test_zero_or_none_is_no_limit_for_every_wait(self):
        # Over TCP, where a socket timeout of 0 made the connect non-blocking (BlockingIOError)
        # while a receive's 0 waited without limit.
        for t in (0, None):
            with contactd.Client(tcp=DAEMON.tcp, timeout=t) as c:
                solve_ok(self, c, contactd.load_scene(BOX))
                seq = c.send(contactd.load_scene(BOX))
                self.assertEqual(c.receive(seq, timeout=0).seq, seq)
        for t in (-1, float("nan"), 1e300):
            with self.assertRaises(ValueError):
                contactd.Client(tcp=DAEMON.tcp, timeout=t)

    def test_a_wait_out_of_range_is_a_value_error(self):
        # A receive's, solve's or stats' own timeout takes the client's range: a negative one
        # ended the wait at once as a Timeout, a NaN one in the socket's ValueError about NaN.
        with contactd.Client(tcp=DAEMON.tcp, timeout=TIMEOUT_S) as c:
            seq = c.send(contactd.load_scene(BOX))
            for t in (-1, -1e-9, float("nan"), float("inf"), 1e300):
                for wait in (lambda: c.receive(seq, timeout=t), lambda: c.stats(timeout=t),
                             lambda: c.solve(contactd.load_scene(BOX), timeout=t)):
                    with self.assertRaises(ValueError) as e:
                        wait()
                    self.assertNotIsInstance(e.exception, contactd.ContactdError)
                    self.assertIn("timeout: seconds in [0, 86400]", str(e.exception))
            # Nothing was sent by a refused solve or stats: the frame's Result is the next.
            self.assertEqual(c.receive(seq).seq, seq)
            self.assertFalse(c.closed)

    def test_a_timeout_names_its_own_wait(self):
        # A receive's own timeout, not the client's (which said "within 0 s" or "None s").
        for t in (0, None, 60):
            with contactd.Client(tcp=DAEMON.tcp, timeout=t) as c:
                with self.assertRaises(contactd.Timeout) as e:
                    c.receive(1000, timeout=0.2)
                self.assertIn("within 0.2 s", str(e.exception))

    def test_no_daemon_is_an_oserror(self):
        with self.assertRaises(OSError):
            contactd.Client(socket="/nonexistent/contactd.sock")


class SceneJson(unittest.TestCase):
    def test_every_scene_file_round_trips(self):
        files = sorted(glob.glob(os.path.join(DATA, "*.json")))
        self.assertGreaterEqual(len(files), 5, DATA)
        with tempfile.TemporaryDirectory() as tmp:
            for path in files:
                frame = contactd.load_scene(path)
                self.assertGreater(len(frame.contacts), 0, path)
                self.assertEqual(contactd.parse_scene(contactd.scene_to_json(frame)), frame)
                copy = os.path.join(tmp, "copy.json")
                contactd.save_scene(frame, copy)
                self.assertEqual(contactd.load_scene(copy), frame)
                self.assertEqual(contactd.as_frame(contactd.message_to_dict(frame)), frame)

    def test_a_misspelt_field_is_named(self):
        from google.protobuf import json_format
        with self.assertRaises(json_format.ParseError) as e:
            contactd.parse_scene('{"dt": 0.001, "bodys": []}')
        self.assertIn("bodys", str(e.exception))


class Framing(unittest.TestCase):
    def test_varints(self):
        for n, b in ((0, b"\x00"), (1, b"\x01"), (127, b"\x7f"), (128, b"\x80\x01"),
                     (300, b"\xac\x02"), (2 ** 64 - 1, b"\xff" * 9 + b"\x01")):
            self.assertEqual(wire.encode_varint(n), b)

    def test_decoder_takes_bytes_in_any_pieces(self):
        bodies = [b"", b"x" * 200, b"abc"]
        stream = b"".join(wire.frame_message(b) for b in bodies)
        for step in (1, 2, 7, len(stream)):
            d, out = wire.Decoder(), []
            for i in range(0, len(stream), step):
                d.feed(stream[i:i + step])
                while True:
                    body = d.next_body()
                    if body is None:
                        break
                    out.append(body)
            self.assertEqual(out, bodies)

    def test_decoder_refuses_an_oversized_prefix(self):
        d = wire.Decoder(max_bytes=100)
        d.feed(wire.encode_varint(101))
        with self.assertRaises(ValueError):
            d.next_body()
        d = wire.Decoder()
        d.feed(b"\xff" * 11)
        with self.assertRaises(ValueError):
            d.next_body()


if __name__ == "__main__":
    unittest.main()
