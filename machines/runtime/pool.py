"""A pool's settings, one object: what the stack exports (``ORCA_POOLS``) and the runtime reads.

Like the cluster-autoscaler's node group, a pool owns its settings: its machine type and
location (so an autoscaler need not hard-code what the stack knows), its market, its max and
its cloud's options (``Ec2Options``, ``HetznerOptions``). The stack file's pools carry the
same option objects (``machines.program.config``), the runtime's ``create`` and the stack's
program turn them into one cloud's create arguments by one function per cloud
(``machines.runtime.clouds.<kind>.machine``), so both make the same machine for the same pool.

Old deployments exported ``ORCA_POOL_MAX`` and ``ORCA_POOL_MARKET`` instead: ``pools_of``
reads those when ``ORCA_POOLS`` is not set (their pools then have no type, location or
options: the cloud's defaults).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator
from pydantic.alias_generators import to_camel

from machines.runtime.errors import SettingsError
from machines.runtime.labels import (
    MANAGED_BY_LABEL,
    ORCA_LABEL,
    OWNER_LABEL,
    POOL_LABEL,
    check_pool,
)
from machines.runtime.models import Market
from machines.runtime.settings import (
    ORCA_POOL_MARKET,
    ORCA_POOL_MAX,
    ORCA_POOLS,
    pool_market,
    pool_max,
    single,
)

SPREAD_LIMIT = 10
"""The most servers one Hetzner spread placement group holds: a pool in one has a ``max`` of
at most this many (with the pools sharing its group), or it is refused when loaded."""

DEFAULT_VOLUME_SIZE = 30
"""GiB of a pool machine's root volume by default (Ubuntu's AMI has 8, which a Docker build
fills in minutes; terraform-aws-github-runner's runners have 30)."""

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


class Options(BaseModel):
    """A pool's option object: frozen, camelCase keys (as the stack file writes them), no
    unknown key, no input in errors."""

    model_config = ConfigDict(
        frozen=True,
        extra="forbid",
        hide_input_in_errors=True,
        alias_generator=to_camel,
        populate_by_name=True,
    )


class RootVolume(Options):
    """An EC2 machine's root volume, which replaces the AMI's (Ubuntu's is 8 GiB).

    ``size`` in GiB (30 by default, room for a Docker build; a size below the AMI's
    snapshot is refused before launch); ``iops`` for gp3, io1 and io2;
    ``throughput`` (MiB/s) for gp3; ``kms_key`` (id or ARN) only when ``encrypted``.
    """

    size: int = Field(default=DEFAULT_VOLUME_SIZE, ge=1, le=65536)
    type: Literal["gp3", "gp2", "io1", "io2", "st1", "sc1", "standard"] = "gp3"
    iops: int | None = Field(default=None, ge=100, le=256000)
    throughput: int | None = Field(default=None, ge=125, le=2000)
    encrypted: bool = True
    kms_key: str = ""

    @model_validator(mode="after")
    def _consistent(self) -> RootVolume:
        if self.iops is not None and self.type not in ("gp3", "io1", "io2"):
            raise ValueError(
                f"iops is set, but a {self.type} volume has no provisioned IOPS: "
                "remove iops or use type gp3, io1 or io2"
            )
        if self.type in ("io1", "io2") and self.iops is None:
            raise ValueError(f"a {self.type} volume needs iops: set iops, e.g. 3000")
        if self.throughput is not None and self.type != "gp3":
            raise ValueError(
                f"throughput is set, but only gp3 volumes take one ({self.type} has none): "
                "remove throughput or use type gp3"
            )
        if self.kms_key and not self.encrypted:
            raise ValueError("kmsKey is set but encrypted is false: set encrypted: true")
        return self


class Metadata(Options):
    """The instance metadata service: IMDSv2 (``tokens: required``) and its hop limit.

    A hop limit of 1 keeps a container on the instance (one more network hop) from the
    instance profile's credentials; a job that needs them from inside a container needs 2.
    """

    tokens: Literal["required", "optional"] = "required"
    hop_limit: int = Field(default=1, ge=1, le=64)


class Ec2Options(Options):
    """A pool's EC2 options, with defaults fit for a CI worker.

    ``image``: an AMI id; ``image_owner`` and ``image_name`` (a name filter, ``*`` allowed):
    the newest AMI of that owner and name for the type's architecture; neither: Canonical's
    newest Ubuntu 24.04 (or ``ORCA_EC2_IMAGE``). ``shutdown``: what a shutdown from inside
    does to the stack's machines (the runtime's always terminate: a stopped instance still
    bills its volume). ``tags`` are added to the orca tags, never over them.
    """

    root_volume: RootVolume = RootVolume()
    metadata: Metadata = Metadata()
    shutdown: Literal["terminate", "stop"] = "terminate"
    image: str = Field(default="", pattern=r"^(ami-[0-9a-f]{8,17})?$")
    image_owner: str = ""
    image_name: str = ""
    tags: dict[str, str] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _one_image(self) -> Ec2Options:
        extra_keys(self.tags, "tag")
        if self.image and (self.image_owner or self.image_name):
            raise ValueError("image and imageOwner/imageName both name the AMI: keep one of them")
        if bool(self.image_owner) != bool(self.image_name):
            missing = "imageName" if self.image_owner else "imageOwner"
            raise ValueError(f"{missing} is missing: an AMI filter needs both owner and name")
        return self


class HetznerOptions(Options):
    """A pool's Hetzner options.

    ``ipv4``/``ipv6``: a public address of each kind (a primary IPv4 is billed; with both off
    the server is reachable through ``network`` only, so that needs one). ``network``: the
    name of a private network the server joins at create (it needs a subnet in the
    location's network zone). ``placement_group``: the name of a spread placement group
    (at most ``SPREAD_LIMIT`` servers). ``image``: a name or id, over the deployment's
    image; ``image_selector``: a label selector, the newest snapshot matching it for the
    type's architecture. ``labels`` are added to the orca labels, never over them.
    """

    ipv4: bool = True
    ipv6: bool = True
    network: str = ""
    placement_group: str = ""
    image: str = ""
    image_selector: str = ""
    labels: dict[str, str] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _reachable(self) -> HetznerOptions:
        extra_keys(self.labels, "label")
        if not (self.ipv4 or self.ipv6 or self.network):
            raise ValueError(
                "ipv4 and ipv6 are both false and no network is set: the server would have "
                "no address at all; set network (a private network) or turn ipv4 or ipv6 on"
            )
        if self.image and self.image_selector:
            raise ValueError("image and imageSelector both name the image: keep one of them")
        return self


CLOUD_OPTIONS: dict[str, str] = {"ec2": "ec2", "hetzner": "hetzner"}
"""The option object each provider kind reads: a pool's other clouds' objects are refused."""


class Pool(Options):
    """One pool's settings. ``machine_type`` and ``location`` are the stack's (empty when
    the deployment predates ``ORCA_POOLS``); ``max`` bounds the pool's machines, the
    stack's and the autoscaler's together."""

    name: str
    machine_type: str = ""
    location: str = ""
    market: Market = Market.ON_DEMAND
    max: int | None = Field(default=None, ge=1)
    ec2: Ec2Options | None = None
    hetzner: HetznerOptions | None = None

    @model_validator(mode="after")
    def _checked(self) -> Pool:
        check_pool(self.name)
        if self.ec2 is not None and self.hetzner is not None:
            raise ValueError("has both ec2 and hetzner options: a pool is on one cloud")
        spread = self.hetzner is not None and self.hetzner.placement_group
        if spread and (self.max is None or self.max > SPREAD_LIMIT):
            raise ValueError(spread_refusal(self.name, self.max))
        return self

    def ec2_options(self) -> Ec2Options:
        """The pool's EC2 options, the defaults when it has none."""
        return self.ec2 or Ec2Options()

    def hetzner_options(self) -> HetznerOptions:
        """The pool's Hetzner options, the defaults when it has none."""
        return self.hetzner or HetznerOptions()


def spread_refusal(pool: str, limit: int | None) -> str:
    """Why a pool in a spread placement group is refused with this max."""
    has = "no max" if limit is None else f"max {limit}"
    return (
        f"pool {pool} is in a spread placement group but has {has}: Hetzner puts at most "
        f"{SPREAD_LIMIT} servers in one, so set the pool's max to {SPREAD_LIMIT} or less "
        "(split a larger pool into pools of their own groups)"
    )


def shared_spread(pools: Iterable[Pool]) -> str:
    """Why pools sharing a placement group could pass its limit together; empty when not."""
    groups: dict[str, list[Pool]] = {}
    for pool in pools:
        if pool.hetzner is not None and pool.hetzner.placement_group:
            groups.setdefault(pool.hetzner.placement_group, []).append(pool)
    for group, members in groups.items():
        total = sum(p.max or 0 for p in members)
        if len(members) > 1 and total > SPREAD_LIMIT:
            names = ", ".join(p.name for p in members)
            return (
                f"pools {names} share placement group {group} with maxes adding up to {total}: "
                f"a spread group holds at most {SPREAD_LIMIT} servers; lower their maxes or "
                "give each pool its own group"
            )
    return ""


def pools_env(pools: Iterable[Pool]) -> dict[str, str]:
    """The ``ORCA_POOLS`` variable of ``pools`` (JSON, camelCase keys, defaults left out)."""
    listed = [p.model_dump(mode="json", by_alias=True, exclude_defaults=True) for p in pools]
    if not listed:
        return {}
    return {ORCA_POOLS: json.dumps(listed, separators=(",", ":"), sort_keys=True)}


def pools_of(env: Mapping[str, str], kind: str = "") -> dict[str, Pool]:
    """The pools a deployment's variables give, by name: ``ORCA_POOLS``, else the old
    ``ORCA_POOL_MAX`` and ``ORCA_POOL_MARKET``. ``kind``, when given, refuses another
    cloud's options. ``SettingsError`` names the variable and what to change."""
    text = single(env, ORCA_POOLS)
    if not text:
        limits, markets = pool_max(env), pool_market(env)
        return {
            name: Pool(name=name, max=limits.get(name), market=markets.get(name, Market.ON_DEMAND))
            for name in [*limits, *(m for m in markets if m not in limits)]
        }
    old = [name for name in (ORCA_POOL_MAX, ORCA_POOL_MARKET) if env.get(name)]
    if old:
        raise SettingsError(
            f"{ORCA_POOLS} and {' and '.join(old)} are both set: {ORCA_POOLS} holds each pool's "
            f"max and market, so unset {' and '.join(old)}"
        )
    try:
        items = json.loads(text)
    except ValueError:
        items = None
    if not isinstance(items, list):
        raise SettingsError(
            f"{ORCA_POOLS} is not a JSON list of pools: write it like "
            '[{"name": "ci", "machineType": "cx23", "location": "fsn1", "max": 20}] '
            "(the stack's env output has it)"
        )
    pools: dict[str, Pool] = {}
    for position, item in enumerate(items, start=1):
        try:
            pool = Pool.model_validate(item)
        except ValidationError as error:
            raise SettingsError(f"{ORCA_POOLS} item {position}: {_first(error)}") from None
        if pool.name in pools:
            raise SettingsError(f"{ORCA_POOLS} names pool {pool.name!r} more than once")
        other = "hetzner" if kind == "ec2" else "ec2" if kind == "hetzner" else ""
        if other and getattr(pool, other) is not None:
            raise SettingsError(
                f"{ORCA_POOLS} pool {pool.name} has {other} options, but this provider is "
                f"{kind}: remove them, or move the pool to a {other} deployment"
            )
        pools[pool.name] = pool
    shared = shared_spread(pools.values())
    if shared:
        raise SettingsError(f"{ORCA_POOLS}: {shared}")
    return pools


def _first(error: ValidationError) -> str:
    """A validation error's first problem as one line: where, and what."""
    first = error.errors(include_url=False)[0]
    where = ".".join(str(part) for part in first["loc"])
    message = str(first["msg"]).removeprefix("Value error, ")
    return f"{where}: {message}" if where else message


REPLACING: frozenset[str] = frozenset(
    {
        "ec2.rootVolume.encrypted",
        "ec2.rootVolume.kmsKey",
        "ec2.image",
        "ec2.imageOwner",
        "ec2.imageName",
        "hetzner.image",
        "hetzner.imageSelector",
    }
)
"""Options whose change replaces a stack's machines (terraform-provider-aws v6 forces a new
instance for the root volume's encryption and key and for an AMI by id; Hetzner boots an
image at create only); every other option changes in place: the root volume's size, type,
IOPS and throughput (ModifyVolume), metadata options, shutdown behaviour and tags on EC2;
public addresses, networks, placement group (the plugin powers the server off for the
first and last) and labels on Hetzner. An AMI or snapshot found anew by its filter only
applies to new machines."""


class OptionChange(BaseModel):
    """One option of a pool changed by a stack change: its key, old and new value."""

    model_config = ConfigDict(frozen=True)

    key: str
    before: str
    after: str

    @property
    def replaces(self) -> bool:
        return self.key in REPLACING or self.key.rsplit(".", 1)[0] in REPLACING


def _flat(prefix: str, value: object) -> dict[str, str]:
    if isinstance(value, dict):
        flat: dict[str, str] = {}
        for key, inner in value.items():
            flat.update(_flat(f"{prefix}.{key}", inner))
        return flat
    return {prefix: json.dumps(value) if not isinstance(value, str) else value or '""'}


def option_changes(before: Pool | None, after: Pool | None) -> list[OptionChange]:
    """The cloud options that differ between two of a pool's settings, by key (defaults
    written out, so a default set explicitly is no change)."""
    if before is None or after is None:
        return []
    found = []
    for cloud in ("ec2", "hetzner"):
        was, now = getattr(before, f"{cloud}_options")(), getattr(after, f"{cloud}_options")()
        if getattr(before, cloud) is None and getattr(after, cloud) is None:
            continue
        old = _flat(cloud, was.model_dump(mode="json", by_alias=True))
        new = _flat(cloud, now.model_dump(mode="json", by_alias=True))
        for key in sorted(set(old) | set(new)):
            if old.get(key) != new.get(key):
                found.append(
                    OptionChange(key=key, before=old.get(key, "-"), after=new.get(key, "-"))
                )
    return found
