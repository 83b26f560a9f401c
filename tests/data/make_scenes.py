#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Writes the scene files of tests/data (canonical JSON of contactd.v1.Frame).

Run from anywhere: /usr/bin/python3 tests/data/make_scenes.py. The geometry is analytic so that
tests can state the expected physics: a box of side 2h resting on a plane, the same box on an
incline (one case sticking, one sliding), a square peg wedged in a square hole (16 contacts on
its 4 faces, Lloyd 2005 Fig. 3) under a fixed pseudo-random wrench, a stack of 3 boxes, and a
two-link arm hinged to the world whose tip rests on a table (joints).
"""
import json
import math
import os
import random

HERE = os.path.dirname(os.path.abspath(__file__))
G = 9.81
DT = 1e-3


def box_inertia(m, a, b, c):
    """Inertia of a solid box with full side lengths a, b, c (row-major 3x3)."""
    return [m * (b * b + c * c) / 12, 0, 0, 0, m * (a * a + c * c) / 12, 0, 0, 0,
            m * (a * a + b * b) / 12]


def vec(v):
    return {"x": v[0], "y": v[1], "z": v[2]}


def rot_y(phi, v):
    c, s = math.cos(phi), math.sin(phi)
    return (c * v[0] + s * v[2], v[1], -s * v[0] + c * v[2])


def body(bid, m, inertia, pos, quat=(1, 0, 0, 0), force=(0, 0, 0), torque=(0, 0, 0)):
    return {"id": bid, "mass": m, "inertia": inertia, "position": vec(pos),
            "orientation": {"w": quat[0], "x": quat[1], "y": quat[2], "z": quat[3]},
            "force": vec(force), "torque": vec(torque)}


def contact(cid, a, b, p, n, mu):
    return {"id": str(cid), "bodyA": a, "bodyB": b, "point": vec(p), "normal": vec(n),
            "distance": 0.0, "friction": mu}


def frame(bodies, contacts, seq=1):
    return {"seq": str(seq), "dt": DT, "gravity": vec((0, 0, -G)), "frictionDirections": 8,
            "bodies": bodies, "contacts": contacts}


def corners(h, z):
    return [(sx * h, sy * h, z) for sx in (1, -1) for sy in (1, -1)]


def box_on_plane():
    h, m = 0.1, 2.0
    b = body(1, m, box_inertia(m, 2 * h, 2 * h, 2 * h), (0, 0, h))
    cs = [contact(i + 1, 1, 0, p, (0, 0, 1), 0.5) for i, p in enumerate(corners(h, 0))]
    return frame([b], cs)


def box_on_incline(mu, theta_deg):
    # The incline rises along +x; its surface normal is e_z rotated about y by -theta.
    h, m, th = 0.1, 2.0, math.radians(theta_deg)
    n = rot_y(-th, (0, 0, 1))
    com = (n[0] * h, n[1] * h, n[2] * h)
    quat = (math.cos(-th / 2), 0, math.sin(-th / 2), 0)
    b = body(1, m, box_inertia(m, 2 * h, 2 * h, 2 * h), com, quat)
    cs = []
    for i, c in enumerate(corners(h, -h)):
        r = rot_y(-th, c)
        cs.append(contact(i + 1, 1, 0, (com[0] + r[0], com[1] + r[1], com[2] + r[2]), n, mu))
    return frame([b], cs)


def peg_in_hole():
    # Square peg of half-width h and half-length l along z, in a hole with walls at +-h.
    h, l, m = 0.02, 0.05, 0.5
    rng = random.Random(1994)
    force = tuple(rng.uniform(-5, 5) for _ in range(3))
    torque = tuple(rng.uniform(-0.1, 0.1) for _ in range(3))
    b = body(1, m, box_inertia(m, 2 * h, 2 * h, 2 * l), (0, 0, 0), force=force, torque=torque)
    cs = []
    faces = [((1, 0, 0), (-1, 0, 0)), ((-1, 0, 0), (1, 0, 0)),
             ((0, 1, 0), (0, -1, 0)), ((0, -1, 0), (0, 1, 0))]
    cid = 1
    for out, n in faces:
        # Two contacts at each end of the face's two long edges.
        tang = (abs(out[1]), abs(out[0]), 0)
        for s in (1, -1):
            for z in (l, -l):
                p = (out[0] * h + s * tang[0] * h, out[1] * h + s * tang[1] * h, z)
                cs.append(contact(cid, 1, 0, p, n, 0.25))
                cid += 1
    return frame([b], cs)


def stack(k):
    h, m = 0.1, 1.0
    bodies, cs, cid = [], [], 1
    for i in range(k):
        bodies.append(body(i + 1, m, box_inertia(m, 2 * h, 2 * h, 2 * h), (0, 0, h + 2 * h * i)))
        for p in corners(h, 2 * h * i):
            cs.append(contact(cid, i + 1, i, p, (0, 0, 1), 0.5))
            cid += 1
    return frame(bodies, cs)


def joint(jid, kind, a, b, anchor, axis=(0, 0, 0)):
    return {"id": jid, "kind": kind, "bodyA": a, "bodyB": b, "anchor": vec(anchor),
            "axis": vec(axis)}


def arm_on_table():
    """Two rods of 0.4 m along x, 1 kg each: a hinge about y to the world at the shoulder, a
    fixed joint at the elbow, and the tip resting on a table (mu 0.5). At rest the tip carries
    (0.2 + 0.6) / 0.8 of the weight 2 m g, m g, and the shoulder the other m g."""
    L, m, r = 0.4, 1.0, 0.02
    rod = box_inertia(m, L, 2 * r, 2 * r)
    z = 0.1
    bodies = [body(1, m, rod, (L / 2, 0, z)), body(2, m, rod, (3 * L / 2, 0, z))]
    joints = [joint(1, "JOINT_HINGE", 1, 0, (0, 0, z), (0, 1, 0)),
              joint(2, "JOINT_FIXED", 2, 1, (L, 0, z))]
    f = frame(bodies, [contact(1, 2, 0, (2 * L, 0, z), (0, 0, 1), 0.5)])
    f["joints"] = joints
    return f


SCENES = {
    "box_on_plane.json": box_on_plane(),
    # tan(20 deg) = 0.364: mu = 0.5 sticks, mu = 0.2 slides.
    "box_on_incline_stick.json": box_on_incline(0.5, 20.0),
    "box_on_incline_slide.json": box_on_incline(0.2, 20.0),
    "peg_in_hole.json": peg_in_hole(),
    "stack_3.json": stack(3),
    "arm_on_table.json": arm_on_table(),
}

if __name__ == "__main__":
    for name, scene in SCENES.items():
        with open(os.path.join(HERE, name), "w") as f:
            json.dump(scene, f, indent=1)
            f.write("\n")
