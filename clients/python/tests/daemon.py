# SPDX-License-Identifier: MIT
"""The contactd child process of the Python tests, as tests/lib/daemon_proc.c starts it for the
C ones: a private directory with its config (Unix socket inside it, TCP on a free loopback port),
NOTIFY_SOCKET played as systemd, READY=1 awaited, the addresses read from STATUS=, SIGTERM at the
end, and SIGTERM too should the test process die first (PR_SET_PDEATHSIG).
CONTACTD_EXE names the daemon (meson passes the one it built)."""
import ctypes
import os
import re
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

READY_TIMEOUT_S = 10
# What a test waits for any answer: the C harness's T_DAEMON_TIMEOUT_MS. The machine may be
# loaded (other daemons at SCHED_FIFO, builds): the tests assert no durations.
TIMEOUT_S = 10


def _die_with_parent():
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


class Daemon:
    """A running contactd. ini: more config lines (a later [server] key overrides the default's).
    Attributes: socket (path), tcp ("127.0.0.1:PORT"), dir, proc."""

    def __init__(self, ini="", exe=None):
        self.exe = exe or os.environ.get("CONTACTD_EXE")
        if not self.exe:
            raise RuntimeError("CONTACTD_EXE names no contactd executable")
        self.dir = tempfile.mkdtemp(prefix="contactd-py-")
        self.proc = None
        try:
            self._notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
            self._notify.bind(os.path.join(self.dir, "notify"))
            config = os.path.join(self.dir, "contactd.conf")
            with open(config, "w", encoding="utf-8") as f:
                # One user runs the tests: TCP is open to it without a token unless ini says.
                f.write("[server]\nsocket = %s/contactd.sock\ntcp = 127.0.0.1:0\n"
                        "tcp_allow_any_local_user = yes\n%s" % (self.dir, ini))
            env = {k: v for k, v in os.environ.items()
                   if k not in ("LISTEN_FDS", "LISTEN_PID", "WATCHDOG_USEC")}
            env["NOTIFY_SOCKET"] = os.path.join(self.dir, "notify")
            self.log_path = os.path.join(self.dir, "contactd.log")
            with open(self.log_path, "wb") as log:
                self.proc = subprocess.Popen([self.exe, "--config", config], env=env,
                                             stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                             preexec_fn=_die_with_parent)
            status = self._wait_ready()
            self.socket = re.search(r"unix:(\S+)", status).group(1)
            self.tcp = re.search(r"tcp:(\S+)", status).group(1)
        except BaseException:
            self.stop()
            raise

    def _wait_ready(self):
        deadline = time.monotonic() + READY_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError("contactd exited with %d before READY=1:\n%s"
                                   % (self.proc.returncode, self.log()))
            r, _, _ = select.select([self._notify], [], [], 0.1)
            if r:
                msg = self._notify.recv(4096).decode()
                if "READY=1" in msg:
                    return msg
        raise RuntimeError("no READY=1 from contactd within %d s:\n%s"
                           % (READY_TIMEOUT_S, self.log()))

    def log(self):
        try:
            with open(self.log_path, encoding="utf-8", errors="replace") as f:
                return f.read()
        except OSError:
            return ""

    def terminate(self):
        """SIGTERM, as systemd stops it; returns its exit status."""
        if self.proc is None or self.proc.poll() is not None:
            return None if self.proc is None else self.proc.returncode
        self.proc.terminate()
        try:
            return self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return self.proc.wait()

    def stop(self):
        """Terminates the daemon (if it runs), writes its log to stderr (meson shows it when a
        test fails) and removes its directory. Idempotent."""
        self.terminate()
        if self.dir:
            sys.stderr.write("--- contactd log (%s) ---\n%s" % (self.dir, self.log()))
        if getattr(self, "_notify", None) is not None:
            self._notify.close()
            self._notify = None
        if self.dir:
            shutil.rmtree(self.dir, ignore_errors=True)
            self.dir = None
