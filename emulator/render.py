"""Pieces of the real API's JSON shapes that several resources share.

Each resource renders itself in its own `handlers.py` (a server carries full `server_type`,
`location` and `image` objects, as hcloud-python and hcloud-go parse them).
"""

from __future__ import annotations

from datetime import UTC, datetime


def timestamp(seconds: float) -> str:
    """RFC 3339 time in UTC, as the API writes it (2024-05-01T10:00:00+00:00)."""
    return datetime.fromtimestamp(seconds, UTC).isoformat(timespec="seconds")


def ipv4_dns_ptr(ip: str) -> str:
    """The reverse DNS name Hetzner gives a primary IPv4 address."""
    return "static." + ".".join(reversed(ip.split("."))) + ".clients.your-server.de"
