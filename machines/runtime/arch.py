"""Architecture names: Docker's, Hetzner's and EC2's, and the images each cloud offers per one.

The autoscaler compares Docker's names (``amd64``, ``arm64``) with its worker image's
platforms, so every provider answers in Docker's names whatever its cloud calls them.
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

_HETZNER = {AMD64: "x86", ARM64: "arm"}
_EC2 = {AMD64: "x86_64", ARM64: "arm64"}

DEFAULT_HETZNER_IMAGE = "ubuntu-24.04"

UBUNTU_OWNER = "099720109477"
"""Canonical's AWS account, the publisher of the official Ubuntu images."""


def docker_arch(provider_arch: str) -> str:
    """Docker's name for a cloud's architecture name; unknown names pass through unchanged."""
    return _DOCKER.get(provider_arch, provider_arch)


def hetzner_arch(arch: str) -> str:
    """Hetzner's name (``x86``/``arm``) for a Docker architecture name."""
    return _HETZNER.get(docker_arch(arch), arch)


def ec2_arch(arch: str) -> str:
    """EC2's name (``x86_64``/``arm64``) for a Docker architecture name."""
    return _EC2.get(docker_arch(arch), arch)


def ubuntu_ami_name(arch: str) -> str:
    """Name pattern of Canonical's Ubuntu 24.04 LTS server images for an architecture."""
    return f"ubuntu/images/hvm-ssd-gp3/ubuntu-noble-24.04-{docker_arch(arch)}-server-*"


def preferred_arch(supported: Sequence[str]) -> str:
    """Docker's name of the architecture a type runs, of those it supports: a 64-bit one
    (``amd64``, ``arm64``) before any other, empty when it names none."""
    archs = [docker_arch(a) for a in supported if a]
    return next((a for a in archs if a in (AMD64, ARM64)), archs[0] if archs else "")
