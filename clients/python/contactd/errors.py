# SPDX-License-Identifier: MIT
"""What a contactd client raises. Everything derives from ContactdError, so one except clause
catches all of it; each also derives from the matching builtin (TimeoutError, ConnectionError)
where one exists."""


class ContactdError(Exception):
    """Base class of every error this package raises."""


class DaemonError(ContactdError):
    """An Error message from the daemon (proto: contactd.v1.Error).

    code: the ErrorCode number; code_name: its name ("ERROR_INVALID", ...); seq: the frame it
    refers to (0 when none); message: the daemon's text, which names the offending field
    ("contacts[0].normal: not unit length ..."). ERROR_INVALID and ERROR_LIMIT leave the session
    running; the others close the connection (the client is closed with it)."""

    def __init__(self, code, code_name, seq, message):
        super().__init__("%s (seq %d): %s" % (code_name, seq, message) if seq else
                         "%s: %s" % (code_name, message))
        self.code = code
        self.code_name = code_name
        self.seq = seq
        self.message = message


class SessionRefused(DaemonError):
    """The daemon answered the Hello with an Error (denied, busy, memory, protocol)."""


class Goodbye(ContactdError, ConnectionError):
    """The daemon is shutting down (proto: contactd.v1.Goodbye); reason says why. The connection
    is closed; a new Client may connect once a daemon runs again."""

    def __init__(self, reason):
        super().__init__("contactd ended the session: %s" % reason)
        self.reason = reason


class ConnectionClosed(ContactdError, ConnectionError):
    """The connection ended without a Goodbye (the daemon died, or closed it after an Error)."""


class ProtocolError(ContactdError, ConnectionError):
    """The peer sent bytes that are not contactd's protocol (another service at that address, or
    a corrupted stream). The client is closed."""


class Timeout(ContactdError, TimeoutError):
    """No answer within the timeout. The session stays open: a late answer is skipped by seq.
    Except after a send that timed out with part of its message gone (the daemon reading
    nothing): the daemon could not tell where a later message starts, so the client is closed,
    and a later call raises ConnectionClosed."""
