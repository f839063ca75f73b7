"""A pool's options on the fake cloud (``fake:`` in a pool): its disk and image."""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from machines.runtime.options import Options

KIND = "fake"
MACHINE = "pulumi-python:dynamic/fake:Server"
"""The type of a fake server in a stack: a Python dynamic resource's, of module ``fake``."""


class FakeOptions(Options):
    """The size of the machine's disk, in GiB, and its image; a new image replaces it."""

    kind: ClassVar[str] = KIND
    replacing: ClassVar[frozenset[str]] = frozenset({"image"})

    disk: int = Field(default=10, ge=1, le=100)
    image: str = ""
