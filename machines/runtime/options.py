"""What a cloud's pool options are: one frozen model per cloud, its rules inside it.

Each cloud declares its options model in its own package (``clouds.<kind>.options``) and
names it in its facts (``clouds.<kind>.facts``); a pool carries one object per cloud under
the key of the cloud's kind (``hetzner:``, ``ec2:``), and shared code asks the model, never
the cloud's name: which of its keys replace a machine when they change, and the rules a pool
in it must keep (its ``max`` with a Hetzner spread group, say). The pool model
(``machines.runtime.pool.Pool``) is built on these models and the clouds' registry, so a
rule reads the pool as ``PoolLike``, never by importing it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import ClassVar, Protocol, TypeVar

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel

from machines.runtime.labels import MANAGED_BY_LABEL, ORCA_LABEL, OWNER_LABEL, POOL_LABEL

RESERVED = frozenset({ORCA_LABEL, POOL_LABEL, OWNER_LABEL, MANAGED_BY_LABEL, "Name"})
"""Labels and tags a pool's extra ones may not set: orca's own (and EC2's ``Name``)."""


def extra_keys(values: Mapping[str, str], word: str) -> Mapping[str, str]:
    """A pool's extra labels or tags, refused when one would set an orca label or tag."""
    taken = sorted(k for k in values if k in RESERVED)
    if taken:
        raise ValueError(
            f"{', '.join(taken)} {'is' if len(taken) == 1 else 'are'} orca's own {word}"
            f"{'' if len(taken) == 1 else 's'}, set on every machine: remove "
            f"{'it' if len(taken) == 1 else 'them'} from the pool's {word}s"
        )
    return values


class Model(BaseModel):
    """An option object: frozen, camelCase keys (as the stack file writes them), no unknown
    key, no input in errors."""

    model_config = ConfigDict(
        frozen=True,
        extra="forbid",
        hide_input_in_errors=True,
        alias_generator=to_camel,
        populate_by_name=True,
    )


OptionsT = TypeVar("OptionsT", bound="Options")


class PoolLike(Protocol):
    """What a cloud's option rules read of a pool (``machines.runtime.pool.Pool``): its name,
    its max and the options it gives a cloud."""

    @property
    def name(self) -> str: ...

    @property
    def max(self) -> int | None: ...

    def given(self, model: type[OptionsT]) -> OptionsT | None:
        """The pool's options of ``model``'s cloud as written, None when it has none."""


class Options(Model):
    """One cloud's options of a pool (subclassed by each cloud, named in its facts).

    ``kind`` is the cloud's provider kind, the pool key its options go under. ``replacing``
    holds the keys (camelCase, dotted inside nested objects) whose change replaces a
    stack's machines; every other key changes in place.
    """

    kind: ClassVar[str] = ""
    replacing: ClassVar[frozenset[str]] = frozenset()

    def pool_refusal(self, pool: PoolLike) -> tuple[str, str] | None:
        """Why ``pool`` cannot hold these options, as (the pool's key, the message); None
        when it can. The cloud's rules that need more of the pool than its options."""
        return None

    @classmethod
    def pools_refusal(cls, pools: Iterable[PoolLike]) -> str:
        """Why pools with this cloud's options cannot stand together; empty when they can
        (a limit shared across pools, say)."""
        return ""
