#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""A robot controller's loop in Python: when does a two-finger grasp start to slip?

Two fingers, kinematic bodies whose velocities the controller prescribes, squeeze a 0.5 kg box
held in the air (mu 0.5 at each pad). At 100 Hz the controller sends the scene (request mode,
the `sap` solver: a rigid two-sided squeeze is statically indeterminate, any equal pair of pad
forces being an answer, while SAP's compliant contact gives it one), reads the pad forces back
and moves the fingers to hold a target grip force with a proportional law. The target holds at
8 N, then ramps down. Holding needs the two pads' friction to carry the weight, 2 mu F >= m g,
so the grasp must start to slip as the grip F passes m g / (2 mu) = 4.905 N: each pad's
friction reaches its cone (|f_t| = mu f_n) and its contact state turns to sliding. The box moves
with the velocities contactd returns. Prints ten lines a second and one line when the slip
starts.

    /usr/bin/python3 clients/examples/robot_grasp.py [--socket PATH | --tcp HOST:PORT]
        [--token-file PATH] [--duration S] [--timeout S]

contactd is imported from PYTHONPATH (e.g. build/clients/python) or where it is installed.
"""
import argparse
import os
import sys
import time

try:
    import contactd
except ImportError:  # run from a source tree built in build/: use its importable package
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                    "build", "clients", "python"))
    import contactd
from contactd import pb

RATE_HZ = 100
HALF = 0.04        # box half-width, m
MASS = 0.5         # kg
MU = 0.5           # at each pad
G = 9.81           # m/s^2
STIFFNESS = 2e4    # pad contact stiffness, N/m (SAP's compliant contact)
GAIN = 0.001       # finger closing speed per newton of grip error, m/s/N
SPEED_MAX = 0.05   # m/s
HOLD_S = 0.5       # s at the first target before the ramp
RAMP = 3.0         # N/s the target falls by
GRIP_START = 8.0   # N per pad
GRIP_END = 2.0     # N per pad
CONE_FULL = 0.999  # |f_t| / (mu f_n) from which a pad's friction counts as saturated


def target_at(t):
    """The grip force the controller aims at, N per pad."""
    return max(GRIP_END, GRIP_START - RAMP * max(0.0, t - HOLD_S))


def make_hand():
    """The scene: the box (body 1) between the left (2) and right (3) fingers, a pad contact on
    each side with its normal from the finger into the box."""
    f = pb.Frame(dt=1.0 / RATE_HZ, gravity=pb.Vec3(z=-G), solver_name="sap")
    inertia = MASS * (2 * HALF) ** 2 / 6
    f.bodies.add(id=1, mass=MASS, inertia=[inertia, 0, 0, 0, inertia, 0, 0, 0, inertia],
                 orientation=pb.Quat(w=1))
    for k, side in enumerate((-1.0, 1.0)):
        f.bodies.add(id=2 + k, kinematic=True, orientation=pb.Quat(w=1))
        f.contacts.add(id=1 + k, body_a=1, body_b=2 + k, normal=pb.Vec3(x=-side), friction=MU,
                       stiffness=STIFFNESS)
    return f


def pose(f, box, gap, speed):
    """Places the fingers at gap (m; < 0: pressing in) from the box's faces, closing at speed."""
    for k, side in enumerate((-1.0, 1.0)):
        finger, pad = f.bodies[1 + k], f.contacts[k]
        finger.position.x = box[0] + side * (HALF + gap + 0.01)  # its centre, 1 cm behind
        finger.position.y, finger.position.z = box[1], box[2]
        finger.linear_velocity.x = -side * speed
        pad.point.x = box[0] + side * HALF
        pad.point.y, pad.point.z = box[1], box[2]
        pad.distance = gap


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--socket", help="daemon socket (default: %s)" % contactd.default_socket())
    ap.add_argument("--tcp", metavar="HOST:PORT", help="connect over TCP instead")
    ap.add_argument("--token-file", metavar="PATH", help="over TCP: the daemon's auth token")
    ap.add_argument("--duration", type=float, default=4.0, help="seconds to run (default 4)")
    ap.add_argument("--timeout", type=float, default=1.0,
                    help="seconds to wait for each answer (default 1)")
    a = ap.parse_args(argv)
    token = None
    if a.token_file:
        with open(a.token_file, encoding="utf-8") as tf:
            token = tf.readline().strip()

    frame = make_hand()
    dt = frame.dt
    box = [0.0, 0.0, 0.0]      # position, m
    box_v = [0.0, 0.0, 0.0]    # velocity, m/s
    # The fingers start pressed in as far as the first target needs (SAP's contact: F = k d).
    gap, grip, speed = -GRIP_START / STIFFNESS, 0.0, 0.0
    held = slipped = False
    labelled = 0  # answers that were not STATUS_OK
    print("box %.3f kg between two pads, mu %.2f: holding needs a grip of m g / (2 mu) = %.3f N"
          % (MASS, MU, MASS * G / (2 * MU)))
    print("    t  target    grip  cone use    box z       box vz  pads")
    try:
        with contactd.Client(socket=a.socket, tcp=a.tcp, token=token, solver="sap",
                             limits={"max_bodies": 3, "max_contacts": 2}, timeout=a.timeout,
                             name="robot_grasp.py") as c:
            wake = time.monotonic()
            for k in range(int(round(a.duration * RATE_HZ))):
                t = k * dt
                # The controller: close faster the further the grip is below its target.
                speed = max(-SPEED_MAX, min(SPEED_MAX, GAIN * (target_at(t) - grip)))
                pose(frame, box, gap, speed)
                frame.bodies[0].linear_velocity.x, frame.bodies[0].linear_velocity.y, \
                    frame.bodies[0].linear_velocity.z = box_v
                r = c.solve(frame)
                normal = r.normal_impulses
                grip = sum(normal) / len(normal) / dt  # N per pad
                use = max(ft / (MU * fn) if fn > 0 else 0.0
                          for ft, fn in zip(r.tangent_impulses, normal))
                box_v = list(r.body_velocity(1)[0])
                box = [p + v * dt for p, v in zip(box, box_v)]
                gap -= speed * dt
                states = " ".join(s[len("STATE_"):].lower() for s in r.states)
                # A slip is the grasp losing its hold: both pads stuck before, one saturated now.
                # Only the solver's own certified answers are judged: a labelled fallback (a
                # deadline missed on a loaded machine) carries an earlier frame's impulses.
                labelled += not r.ok
                held = held or (r.ok and all(s == "STATE_STICK" for s in r.states))
                if held and not slipped and r.ok and (use >= CONE_FULL or
                                                      "STATE_SLIDE" in r.states):
                    slipped = True
                    print("slip at t=%.2f s: grip %.3f N per pad, friction at %.3f of its cone, "
                          "2 mu grip = %.3f N < m g = %.3f N (pads: %s)"
                          % (t, grip, use, 2 * MU * grip, MASS * G, states))
                if k % (RATE_HZ // 10) == 0:
                    print("%5.2f  %5.2f N  %5.2f N  %7.4f  %+.5f m  %+.4f m/s  %s%s"
                          % (t, target_at(t), grip, use, box[2], box_v[2], states,
                             "" if r.ok else "  (%s)" % r.status_name))
                    sys.stdout.flush()
                # The next period; after a stall the schedule restarts from now rather than
                # sending the missed frames in a burst (request mode's rate: README "Sessions").
                wake = max(wake + dt, time.monotonic())
                time.sleep(max(0.0, wake - time.monotonic()))
    except contactd.ContactdError as e:
        print("robot_grasp.py: %s" % e, file=sys.stderr)
        return 1
    except OSError as e:
        print("robot_grasp.py: %s (is contactd running?)" % e, file=sys.stderr)
        return 1
    if labelled:
        print("%d answers were not STATUS_OK (labelled fallbacks)" % labelled)
    if not slipped:
        print("no slip within %.1f s (the grip reached %.3f N)" % (a.duration, grip))
    return 0


if __name__ == "__main__":
    sys.exit(main())
