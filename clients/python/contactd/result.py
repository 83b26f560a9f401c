# SPDX-License-Identifier: MIT
"""A Result with its per-contact numbers as arrays: NumPy float64 arrays of shape (n, 3) when
NumPy is installed, lists of (x, y, z) tuples when it is not (HAVE_NUMPY says which). Every
other field of the contactd.v1.Result is reached through the wrapper (result.timing,
result.residuals, ...) or result.message."""
from google.protobuf import json_format

from . import pb

try:
    import numpy as _np
except ImportError:  # the clean path: plain tuples
    _np = None

HAVE_NUMPY = _np is not None


def vectors(vecs):
    """Vec3 messages as an (n, 3) float64 array, or a list of (x, y, z) tuples without NumPy."""
    rows = [(v.x, v.y, v.z) for v in vecs]
    if _np is None:
        return rows
    return _np.array(rows, dtype=float).reshape(len(rows), 3)


def _scalars(values):
    values = list(values)
    return _np.array(values, dtype=float) if _np is not None else values


class Result:
    """One answered frame. Attributes not defined here come from the Result message."""

    def __init__(self, message):
        self.message = message  # contactd.v1.Result

    def __getattr__(self, name):
        return getattr(self.message, name)

    def __repr__(self):
        return "<contactd.Result seq=%d %s, %d contacts>" % (
            self.message.seq, self.status_name, len(self.message.contacts))

    @property
    def status_name(self):
        """"STATUS_OK", "STATUS_DEADLINE", "STATUS_FALLBACK" or "STATUS_FAILED"."""
        return pb.Status.Name(self.message.status)

    @property
    def ok(self):
        """True when the answer is the solver's own and certified (STATUS_OK)."""
        return self.message.status == pb.STATUS_OK

    @property
    def contact_ids(self):
        """Contact ids, in the order of the arrays below (the frame's order)."""
        return [c.id for c in self.message.contacts]

    @property
    def forces(self):
        """Each contact's force on body_a at its point, world frame, N: (nc, 3)."""
        return vectors(c.force for c in self.message.contacts)

    @property
    def impulses(self):
        """Each contact's impulse in its contact frame (normal, tangent1, tangent2), N s:
        (nc, 3). Divide by the frame's dt for forces in that frame."""
        return vectors(c.impulse for c in self.message.contacts)

    @property
    def normal_impulses(self):
        """The normal components of impulses, N s: (nc,)."""
        return _scalars(c.impulse.x for c in self.message.contacts)

    @property
    def tangent_impulses(self):
        """|impulse along the contact plane| per contact, N s: (nc,). With normal_impulses, the
        friction cone's use: tangent <= mu normal, equal when the contact slides."""
        return _scalars((c.impulse.y ** 2 + c.impulse.z ** 2) ** 0.5
                        for c in self.message.contacts)

    @property
    def states(self):
        """Each contact's state name: "STATE_STICK", "STATE_SLIDE" or "STATE_SEPARATE"."""
        return [pb.ContactState.Name(c.state) for c in self.message.contacts]

    @property
    def joint_forces(self):
        """Each joint's force on body_a at its anchor, world, N: (nj, 3), in frame order."""
        return vectors(j.force for j in self.message.joints)

    @property
    def joint_torques(self):
        """Each joint's torque on body_a, world, N m: (nj, 3)."""
        return vectors(j.torque for j in self.message.joints)

    def body_velocity(self, body_id):
        """(linear m/s, angular rad/s) of body body_id after the step, each a 3-vector (array or
        tuple). Raises KeyError when the Result has no such body."""
        for b in self.message.bodies:
            if b.id == body_id:
                lin = vectors([b.linear_velocity])[0]
                ang = vectors([b.angular_velocity])[0]
                return lin, ang
        raise KeyError("no body with id %d in the result" % body_id)

    def to_json(self):
        """The Result in the canonical proto3 JSON mapping."""
        return json_format.MessageToJson(self.message)
