# SPDX-License-Identifier: MIT
"""The stream framing of proto/contactd.proto: every message is preceded by its length as a
base-128 varint (protobuf's "delimited" form). Pure functions and a decoder that owns no socket,
so the framing is tested without a daemon."""

_VARINT_MAX_BYTES = 10  # a uint64 takes at most 10 groups of 7 bits


def encode_varint(n):
    """The varint of n (an int >= 0) as bytes."""
    if n < 0:
        raise ValueError("varint of a negative number: %d" % n)
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def frame_message(body):
    """body (serialized message bytes) with its length prefix, ready for the socket."""
    return encode_varint(len(body)) + body


class Decoder:
    """Collects received bytes and hands out whole message bodies."""

    def __init__(self, max_bytes=64 << 20):
        """max_bytes: a longer length prefix is a framing error (the daemon's largest message is
        bounded by its max_message_bytes; 64 MiB is its config's ceiling)."""
        self._buf = bytearray()
        self._max = max_bytes

    def feed(self, data):
        """Appends received bytes."""
        self._buf += data

    def next_body(self):
        """The next complete message body (bytes), or None until more bytes arrive. Raises
        ValueError for a malformed or oversized length prefix."""
        n, shift = 0, 0
        for i, b in enumerate(self._buf[:_VARINT_MAX_BYTES]):
            n |= (b & 0x7F) << shift
            shift += 7
            if not b & 0x80:
                break
        else:
            if len(self._buf) >= _VARINT_MAX_BYTES:
                raise ValueError("malformed length prefix")
            return None
        if n > self._max:
            raise ValueError("message of %d bytes announced, over %d" % (n, self._max))
        start = i + 1
        if len(self._buf) < start + n:
            return None
        body = bytes(self._buf[start:start + n])
        del self._buf[:start + n]
        return body
