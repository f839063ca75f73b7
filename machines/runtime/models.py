"""The values the autoscaler exchanges with a provider, the same for every cloud."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any, ClassVar, Literal, overload

from pydantic import BaseModel, ConfigDict, Field, field_validator

from machines.runtime.labels import check_host_name, check_pool


class Status(StrEnum):
    """A machine's state in one vocabulary for every provider (each maps its own onto it)."""

    STARTING = "starting"
    RUNNING = "running"
    STOPPING = "stopping"
    OFF = "off"
    DELETING = "deleting"
    FAILED = "failed"  # the cloud could not make it (Hetzner: its create action failed): delete it
    UNKNOWN = "unknown"


class Market(StrEnum):
    """Where a pool's machines are bought: EC2's on-demand or spot capacity, or spot first.

    ``spot-then-on-demand`` launches spot capacity and, when there is none, on-demand in
    the same ``create``. Only EC2 sells spot capacity; Hetzner Cloud has on-demand only.
    """

    ON_DEMAND = "on-demand"
    SPOT = "spot"
    SPOT_THEN_ON_DEMAND = "spot-then-on-demand"

    @property
    def tries(self) -> tuple[Market, ...]:
        """The markets a create tries, in order: spot first for ``spot-then-on-demand``."""
        if self is Market.SPOT_THEN_ON_DEMAND:
            return (Market.SPOT, Market.ON_DEMAND)
        return (self,)

    @property
    def kept(self) -> Market:
        """The market of the machines a stack keeps in a pool of this market: spot for
        ``spot``, else on-demand. A stack's machine cannot fall back within its create, so a
        ``spot-then-on-demand`` pool keeps its floor on-demand and its autoscaler tries spot."""
        return Market.SPOT if self is Market.SPOT else Market.ON_DEMAND


class MachineSpec(BaseModel):
    """What the autoscaler asks for: one machine of a pool.

    ``user_data`` is kept out of reprs and validation errors: it often carries secrets.
    """

    model_config = ConfigDict(frozen=True, extra="forbid", hide_input_in_errors=True)

    POSITIONAL: ClassVar[tuple[str, ...]] = (
        "name",
        "machine_type",
        "location",
        "user_data",
        "pool",
    )
    """The fields the design document writes, in its order: ``MachineSpec("orca-lab-7",
    "cax31", "hel1", data, "lab")`` works as written. Fields added later are keyword-only."""

    name: str
    machine_type: str = Field(min_length=1)
    location: str = Field(min_length=1)
    user_data: str = Field(default="", repr=False)
    pool: str

    @overload
    def __init__(
        self, name: str, machine_type: str, location: str, user_data: str, pool: str, /
    ) -> None: ...

    @overload
    def __init__(
        self, *, name: str, machine_type: str, location: str, user_data: str = "", pool: str
    ) -> None: ...

    def __init__(self, *args: str, **fields: Any) -> None:
        """Positional arguments are the ``POSITIONAL`` fields in order, keywords as pydantic
        takes them; either way the same validation, and ``user_data`` in no message."""
        super().__init__(**positional(type(self).__name__, self.POSITIONAL, args, fields))

    @field_validator("name")
    @classmethod
    def _host_name(cls, name: str) -> str:
        return check_host_name(name)

    @field_validator("pool")
    @classmethod
    def _pool(cls, pool: str) -> str:
        return check_pool(pool)


def positional(
    model: str, names: tuple[str, ...], args: tuple[object, ...], fields: dict[str, Any]
) -> dict[str, Any]:
    """``fields`` with ``args`` given to ``names`` in order, as Python binds a call: too many
    or a field given twice is a ``TypeError`` naming the field, never its value."""
    if len(args) > len(names):
        raise TypeError(
            f"{model}() takes at most {len(names)} positional arguments "
            f"({', '.join(names)}) but {len(args)} were given"
        )
    bound = dict(zip(names, args, strict=False))
    twice = sorted(bound.keys() & fields.keys())
    if twice:
        raise TypeError(f"{model}() got multiple values for argument {twice[0]!r}")
    return {**bound, **fields}


class Ending(StrEnum):
    """Why a machine is going or gone, or will go soon, as the cloud says: empty while it
    is not.

    ``deleted`` and ``interrupted`` are said of a machine that is going (``deleting``);
    the notices are said of one still running: ``interrupting`` (EC2's spot interruption
    warning: its capacity is taken back at ``ends_at``, two minutes after the warning),
    ``rebalance`` (EC2's rebalance recommendation: its spot capacity is at higher risk of
    being taken back, when is not said) and ``scheduled`` (a change the cloud scheduled for
    it, such as an AWS Health retirement or maintenance, at ``ends_at``).
    """

    NONE = ""
    DELETED = "deleted"  # someone asked for it: the autoscaler, the stack or a person
    INTERRUPTED = "interrupted"  # the cloud took its spot capacity back
    INTERRUPTING = "interrupting"  # the cloud takes its spot capacity back at ends_at
    REBALANCE = "rebalance"  # the cloud recommends moving off its spot capacity
    SCHEDULED = "scheduled"  # the cloud scheduled a change that ends it at ends_at

    @property
    def notice(self) -> bool:
        """Whether this is a notice of a running machine that it will go (see the class)."""
        return self in NOTICES


NOTICES = frozenset({Ending.INTERRUPTING, Ending.REBALANCE, Ending.SCHEDULED})
"""The endings said of a machine that still runs: notices that it will go."""


class Machine(BaseModel):
    """A machine as the cloud reports it. The design document's seven fields are strings.

    ``address`` is the public IPv4 address, else the public IPv6 network (EC2: else the
    private address), else empty while none is assigned. ``managed_by`` is ``"pulumi"`` for
    a machine the stack keeps (the runtime never deletes it) and ``""`` for one
    ``Provider.create`` made. ``market`` is ``spot`` or ``on-demand``; ``ending`` says why a
    machine that is going (``deleting``) goes: ``deleted`` or ``interrupted``; of a machine
    that still runs, the cloud's notice that it will go (``interrupting``, ``rebalance``,
    ``scheduled``: ``under_notice``), and ``ends_at`` when, where the cloud said (an aware
    UTC datetime, else None).

    ``created`` is the cloud's own creation time (Hetzner's ``created``, EC2's
    ``LaunchTime``), in UTC; ``paid_until`` the end of the time the cloud bills for the
    machine whatever happens now, by that cloud's billing rule (``machines.runtime.billing``), at
    the moment ``machines`` answered. Both are None where the cloud did not say.

    ``cloud`` is the provider kind of the cloud that holds it (``hetzner``, ``ec2``), set by
    ``Provider`` on every machine it lists or makes; a pool that spans clouds has machines
    of several.
    """

    model_config = ConfigDict(frozen=True)

    id: str
    name: str
    status: Status
    machine_type: str
    location: str
    address: str
    pool: str
    managed_by: str = ""
    market: Market = Market.ON_DEMAND
    ending: Ending = Ending.NONE
    created: datetime | None = None
    paid_until: datetime | None = None
    cloud: str = ""
    ends_at: datetime | None = None

    @property
    def interrupted(self) -> bool:
        """The cloud took the machine's spot capacity back: it is going or gone."""
        return self.ending == Ending.INTERRUPTED

    @property
    def under_notice(self) -> bool:
        """The cloud said the running machine will go (``Ending.notice``): start nothing
        new on it, and let it go once idle (``keep_advice`` says so)."""
        return self.ending.notice

    @property
    def counts_toward_max(self) -> bool:
        """Whether the machine holds a place of its pool's ``max``: not one being deleted,
        nor one under an interruption warning (its replacement must not wait for it)."""
        return self.status != Status.DELETING and self.ending != Ending.INTERRUPTING


def machine_address(*candidates: str | None) -> str:
    """A machine's address: the first of the cloud's addresses, in order of preference, set.

    Hetzner passes (public IPv4, public IPv6 network, first private network address), EC2
    (public IPv4, private IPv4); the
    runtime and the Pulumi program's outputs use this one rule.
    """
    return next((c for c in candidates if c), "")


def mismatch(spec: MachineSpec, machine: Machine) -> str:
    """Why ``machine`` is not what ``spec`` asks for (type, location, pool); empty when it is.

    A create whose name is already taken by this owner's machine returns that machine only
    when it is the one asked for: an autoscaler that asked for arm capacity in hel1 must not
    be told it got it because an amd64 machine of that name runs in fsn1, nor get a machine
    the stack keeps (named before the stack's names took their own form) as its own.
    """
    if machine.managed_by:
        return (
            f"the name {spec.name} is taken by machine {machine.id}, which the stack keeps "
            f"(orca-managed-by={machine.managed_by}; a name of the stack's old form, which its "
            "next `up` renames): choose another name"
        )
    asked = (spec.machine_type, spec.location, spec.pool)
    found = (machine.machine_type, machine.location, machine.pool)
    if asked == found:
        return ""
    return (
        f"the name {spec.name} is already taken by machine {machine.id}, a "
        f"{machine.machine_type} in {machine.location} of pool {machine.pool}, not the "
        f"{spec.machine_type} in {spec.location} of pool {spec.pool} asked for: "
        "delete that machine or choose another name"
    )


Outcome = Literal["ok", "no_stock", "failed"]


class Created(BaseModel):
    """What ``create`` returns: the machine, or no stock of its type there, or why it failed.

    Branch on ``ok`` and ``no_stock``; ``reason`` is a sentence for people, not for parsing.
    ``passed_over`` says, for a pool that names several places (``Pool.places``), each place
    tried or skipped before the one that made the machine, and why (a sentence each, in
    order); ``machine.cloud``, ``machine_type`` and ``location`` say where it was made.
    """

    model_config = ConfigDict(frozen=True)

    outcome: Outcome
    machine: Machine | None = None
    reason: str = ""
    passed_over: tuple[str, ...] = ()
    ordered: str = ""
    """For a pool that ranks its places by price: that ranking, each place's price or why
    it kept its written place (``machines.runtime.price_order``)."""
    code: str = ""
    """The code behind a ``no_stock`` or ``failed`` answer: the cloud's own
    (``resource_unavailable``, ``resource_limit_exceeded``, ``VcpuLimitExceeded``, ...) or,
    where no usable answer came, the runtime's (``timeout``, ``connection``,
    ``not_the_api``, ``credentials``); empty for a refusal of the runtime's own (a pool at
    its max, a spec at none of its pool's places)."""
    transient: bool = False
    """A ``failed`` create the cloud could not answer now: no answer came, or each answer
    was worth another try (5xx, throttled) until the call's time ran out. Try again shortly
    (or elsewhere: nothing was made, unless ``may_exist``)."""
    may_exist: bool = False
    """A ``failed`` create whose request may have made the machine although its answer was
    lost: create the same name again (it returns that machine, never a second one), and
    never ask for it under another name."""

    @property
    def ok(self) -> bool:
        """The machine exists (made now, or by an earlier attempt of the same create)."""
        return self.outcome == "ok"

    @property
    def no_stock(self) -> bool:
        """The cloud has no capacity for this type in this location now: try later or elsewhere."""
        return self.outcome == "no_stock"

    @property
    def failed(self) -> bool:
        """Neither made nor out of stock: ``reason`` says what to fix."""
        return self.outcome == "failed"

    @classmethod
    def success(cls, machine: Machine) -> Created:
        return cls(outcome="ok", machine=machine)

    @classmethod
    def out_of_stock(cls, reason: str, code: str = "") -> Created:
        return cls(outcome="no_stock", reason=reason, code=code)

    @classmethod
    def failure(
        cls, reason: str, code: str = "", *, transient: bool = False, may_exist: bool = False
    ) -> Created:
        return cls(
            outcome="failed", reason=reason, code=code, transient=transient, may_exist=may_exist
        )
