"""One wall-clock deadline per API call, held by every request and body read inside it.

``machines.runtime.retry.call`` opens the deadline; the clients of each cloud read it: each
request's timeout is cut to the time left (so the last retry ends with the call), and a body is read
with the socket's timeout set to the time left before each read, so an endpoint that trickles
a byte at a time cannot keep a call alive past its bound.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import urllib3.exceptions

_local = threading.local()

_CHUNK = 64 * 1024
_SHORTEST = 0.001
"""A request is never given a zero timeout: zero would mean 'do not block' to a socket."""


class BodyTimeout(TimeoutError):
    """A body did not arrive within the request's timeout or the call's deadline."""


@contextmanager
def bounded(seconds: float) -> Iterator[None]:
    """Hold a deadline ``seconds`` from now for the calls this thread makes inside."""
    previous = getattr(_local, "at", None)
    at = time.monotonic() + seconds
    _local.at = at if previous is None else min(previous, at)
    try:
        yield
    finally:
        _local.at = previous


def left() -> float | None:
    """Seconds left of this thread's deadline (0 when spent), or None outside any."""
    at: float | None = getattr(_local, "at", None)
    return None if at is None else max(0.0, at - time.monotonic())


def timeout(configured: float) -> float:
    """A request's timeout: the configured one, cut to the time left of the deadline."""
    remaining = left()
    return configured if remaining is None else max(_SHORTEST, min(configured, remaining))


class BodyBroken(ConnectionError):
    """The connection ended before the body its Content-Length announced had arrived."""


def read_body(raw: Any, configured: float, *, decode: bool) -> bytes:
    """All of a urllib3 response's body within ``configured`` seconds a read and the
    deadline in all; ``BodyTimeout`` if not.

    Each read returns what one receive brings (``read1``) with the socket's timeout set to
    the time left, so the whole body, not each read, is bounded. ``decode``: undo the
    body's Content-Encoding (requests does; botocore leaves it). A body shorter than its
    Content-Length is ``BodyBroken``, never half an answer.
    """
    chunks: list[bytes] = []
    while True:
        remaining = left()
        if remaining is not None and remaining <= 0:
            raw.release_conn()
            raise BodyTimeout("the call's time was spent while the answer was still arriving")
        _set_socket_timeout(raw, timeout(configured))
        try:
            chunk = raw.read1(_CHUNK, decode_content=decode)
        except (TimeoutError, urllib3.exceptions.TimeoutError) as error:
            raise BodyTimeout("the answer stopped arriving within the request's time") from error
        if not chunk:
            if raw.length_remaining:
                raise BodyBroken(f"the answer ended {raw.length_remaining} bytes short")
            return b"".join(chunks)
        chunks.append(chunk)


def _set_socket_timeout(raw: Any, seconds: float) -> None:
    connection = getattr(raw, "_connection", None)
    sock = getattr(connection, "sock", None)
    if sock is not None:
        sock.settimeout(seconds)
