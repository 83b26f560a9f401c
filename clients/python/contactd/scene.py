# SPDX-License-Identifier: MIT
"""Scene files: a contactd.v1.Frame in the canonical proto3 JSON mapping (tests/data/*.json;
lowerCamelCase names, 64-bit integers as strings or numbers, absent fields at their defaults),
read and written with google.protobuf.json_format, so any protobuf runtime reads them."""
import json

from google.protobuf import json_format

from . import pb


def parse_scene(text):
    """A Frame from scene JSON text. Raises google.protobuf.json_format.ParseError naming the
    field that does not fit the schema."""
    return json_format.Parse(text, pb.Frame())


def load_scene(path):
    """A Frame from the scene file at path."""
    with open(path, encoding="utf-8") as f:
        return parse_scene(f.read())


def scene_to_json(frame):
    """frame (a Frame) as scene JSON text, readable by load_scene and contactctl."""
    return json_format.MessageToJson(frame)


def save_scene(frame, path):
    """Writes frame to path as scene JSON (with a final newline)."""
    with open(path, "w", encoding="utf-8") as f:
        f.write(scene_to_json(frame) + "\n")


def as_frame(scene):
    """A Frame from a Frame (returned as is), a dict in the JSON mapping, or scene JSON text."""
    if isinstance(scene, pb.Frame):
        return scene
    if isinstance(scene, dict):
        return json_format.ParseDict(scene, pb.Frame())
    if isinstance(scene, (str, bytes)):
        return parse_scene(scene)
    raise TypeError("a scene is a contactd.pb.Frame, a dict or JSON text, not %s"
                    % type(scene).__name__)


def set_kinematic(frame, body_id):
    """Makes body body_id of frame kinematic: its velocity (as given) is prescribed, so it sends
    no mass and no inertia (the daemon refuses them for a kinematic body). Raises KeyError when
    frame has no such body."""
    for b in frame.bodies:
        if b.id == body_id:
            b.kinematic = True
            b.mass = 0
            del b.inertia[:]
            return
    raise KeyError("no body with id %d in the scene" % body_id)


def message_to_dict(msg):
    """Any contactd message (Result, Stats, Welcome, ...) as a dict of the JSON mapping."""
    return json.loads(json_format.MessageToJson(msg))
