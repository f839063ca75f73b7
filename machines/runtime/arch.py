"""Architecture names: Docker's, and the readers of every cloud's names for them.

The autoscaler compares Docker's names (``amd64``, ``arm64``) with its worker image's
platforms, so every provider answers in Docker's names whatever its cloud calls them; each
cloud names its own in its ``settings`` module and reads them back with ``docker_arch``.
"""

from __future__ import annotations

from collections.abc import Sequence

AMD64 = "amd64"
ARM64 = "arm64"

_DOCKER = {
    "arm": ARM64,
    "aarch64": ARM64,
    "arm64": ARM64,
    "x86": AMD64,
    "x86_64": AMD64,
    "amd64": AMD64,
}


def docker_arch(provider_arch: str) -> str:
    """Docker's name for a cloud's architecture name; unknown names pass through unchanged."""
    return _DOCKER.get(provider_arch, provider_arch)


def preferred_arch(supported: Sequence[str]) -> str:
    """Docker's name of the architecture a type runs, of those it supports: a 64-bit one
    (``amd64``, ``arm64``) before any other, empty when it names none."""
    archs = [docker_arch(a) for a in supported if a]
    return next((a for a in archs if a in (AMD64, ARM64)), archs[0] if archs else "")
