"""What the fence keeps per owner and pool: the creates in flight, each an ``Entry``.

An entry is written by the create that counts (one conditional write) and ends when its
create fails (the holder removes it), when the machine it names is deleted, or at ``until``,
by when every process's listing shows the machine it made (or it made none): a killed
process's entries end so too. A listing that shows the name counts the machine instead, so
an entry is never counted twice.
"""

from __future__ import annotations

import json

from pydantic import BaseModel, ConfigDict, ValidationError

from machines.runtime.errors import FenceError

FORMAT = 1
"""The object's format; one of another format is refused, never overwritten."""


class Entry(BaseModel):
    """One create in flight: the machine's name, where it was asked for (cloud and place),
    since when, until when its create may still be making it (``making``: its writer's
    call time) and until when it holds its slot (seconds since the epoch), and who holds
    it (a process, ``host:pid:nonce``, or a stack)."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    name: str
    cloud: str
    place: str
    since: float
    until: float
    holder: str
    making: float = 0.0

    def being_made(self, now: float) -> bool:
        """Whether its create may still be under way at ``now`` (past its call time it has
        ended, with a machine or without one)."""
        return now < self.making


class Held(BaseModel):
    """The object of one owner's pool: its creates in flight."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    format: int = FORMAT
    entries: tuple[Entry, ...] = ()

    @classmethod
    def read(cls, raw: bytes | None, where: str) -> Held:
        """The object as stored at ``where`` (None: not written yet, no entries)."""
        if raw is None:
            return cls()
        try:
            held = cls.model_validate(json.loads(raw))
        except (ValueError, ValidationError):
            raise FenceError(
                f"{where} holds something that is not a fence's object: move it away (the "
                "fence writes it anew)"
            ) from None
        if held.format != FORMAT:
            raise FenceError(
                f"{where} is a fence object of format {held.format}, not {FORMAT}: a newer "
                "orca-machines wrote it; run one version against one store"
            )
        return held

    def dump(self) -> bytes:
        """The object as stored."""
        return self.model_dump_json().encode()

    def live(self, now: float) -> tuple[Entry, ...]:
        """The entries still holding their slot at ``now``."""
        return tuple(e for e in self.entries if e.until > now)
