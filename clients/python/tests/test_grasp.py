# SPDX-License-Identifier: MIT
"""clients/examples/robot_grasp.py against the daemon built here, in its short mode: the grasp
holds while the grip force is above what holding needs and slips as it passes it. Holding needs
the two pads' friction to carry the weight, 2 mu F >= m g, so the slip must come at
F = m g / (2 mu), with m and mu from the example's header and g = 9.81 m/s^2."""
import os
import re
import subprocess
import sys
import unittest

from daemon import TIMEOUT_S, Daemon

EXAMPLE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples",
                       "robot_grasp.py")
G = 9.81
TOLERANCE = 0.01  # of the threshold: the 100 Hz ramp moves the grip 0.03 N a step


class Grasp(unittest.TestCase):
    def test_slips_where_friction_can_no_longer_carry_the_weight(self):
        d = Daemon()
        try:
            p = subprocess.run([sys.executable, EXAMPLE, "--socket", d.socket, "--duration",
                                "2.2", "--timeout", str(TIMEOUT_S)], capture_output=True,
                               text=True, timeout=120)
        finally:
            d.stop()
        self.assertEqual(p.returncode, 0, p.stderr)
        out = p.stdout
        header = re.search(r"box ([\d.]+) kg between two pads, mu ([\d.]+)", out)
        self.assertIsNotNone(header, out)
        mass, mu = float(header.group(1)), float(header.group(2))
        threshold = mass * G / (2 * mu)
        slips = re.findall(r"^slip at t=([\d.]+) s: grip ([\d.]+) N per pad", out, re.M)
        self.assertEqual(len(slips), 1, out)
        t_slip, grip = float(slips[0][0]), float(slips[0][1])
        self.assertLessEqual(abs(grip - threshold), TOLERANCE * threshold, out)
        # Every tenth-second line: stuck with the grip above the threshold before the slip,
        # sliding after it (lines of labelled answers, from a loaded machine, aside).
        rows = re.findall(r"^\s*([\d.]+)\s+[\d.]+ N\s+([\d.]+) N\s+\S+\s+\S+ m\s+\S+ m/s\s+"
                          r"(\w+) (\w+)(.*)$", out, re.M)
        self.assertEqual(len(rows), 22, out)
        for t, g, a, b, label in rows:
            if "STATUS_" in label:
                continue
            t, g = float(t), float(g)
            if t < t_slip:
                self.assertEqual((a, b), ("stick", "stick"), out)
                self.assertGreater(g, threshold * (1 - TOLERANCE), out)
            elif t > t_slip:
                self.assertEqual((a, b), ("slide", "slide"), out)


if __name__ == "__main__":
    unittest.main()
