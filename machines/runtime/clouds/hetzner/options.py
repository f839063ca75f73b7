"""A pool's Hetzner options and their rules (the spread placement group's limit among them).

Light on purpose: the pool model, the stack file's check and the Hetzner provider all read
it, so it imports neither hcloud nor anything of the provider.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import ClassVar

from pydantic import Field, field_validator, model_validator

from machines.runtime.labels import numbers_as_text
from machines.runtime.options import Options, PoolLike, extra_keys

KIND = "hetzner"

SPREAD_LIMIT = 10
"""The most servers one Hetzner spread placement group holds: a pool in one has a ``max`` of
at most this many (with the pools sharing its group), or it is refused when loaded."""

LABEL_RULE = (
    "a label key is an optional DNS-subdomain prefix and '/', then a name of 1 to 63 "
    "characters; a value has at most 63 characters (or none); names and values are letters, "
    "digits, '-', '_' and '.', starting and ending with a letter or digit"
)
"""Hetzner's label rules (docs.hetzner.cloud, "Labels"; hcloud-go's ``ValidateResourceLabels``
and the emulator's ``emulator.labels`` hold the same): what the API refuses with
``invalid_input`` at ``POST /servers``."""

_LABEL_NAME = re.compile(r"[A-Za-z0-9]([A-Za-z0-9_.-]{0,61}[A-Za-z0-9])?")
_DNS_LABEL = re.compile(r"[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?")
_RESERVED_PREFIX = "hetzner.cloud"

SELECTOR_RULE = (
    "write terms joined by commas: key=value, key==value, key!=value, key (has the label), "
    "!key (has it not), key in (a,b) or key notin (a,b)"
)
"""Hetzner's label-selector language (docs.hetzner.cloud, "Label Selector")."""

_ABSENT = re.compile(r"!\s*([^\s=!(),]+)")
_SET = re.compile(r"([^\s=!(),]+)\s+(in|notin)\s*\(([^()]*)\)")
_COMPARE = re.compile(r"([^\s=!(),]+)\s*(==|=|!=)\s*([^\s=!(),]*)")
_EXISTS = re.compile(r"[^\s=!(),]+")


def label_key_problem(key: str, *, selecting: bool = False) -> str:
    """Why Hetzner refuses ``key`` as a label key; empty when it takes it (``selecting``: in
    a selector, where Hetzner's own prefix may be asked for)."""
    prefix, slash, name = key.rpartition("/")
    if slash and not (
        0 < len(prefix) <= 253 and all(_DNS_LABEL.fullmatch(p) for p in prefix.split("."))
    ):
        return f"label key {key!r} has a prefix {prefix!r} that is no DNS subdomain"
    if slash and prefix == _RESERVED_PREFIX and not selecting:
        return f"label key {key!r} has Hetzner's own prefix {_RESERVED_PREFIX}/"
    if _LABEL_NAME.fullmatch(name) is None:
        return f"label key {key!r} {_unfit(name)}"
    return ""


def label_value_problem(key: str, value: str) -> str:
    """Why Hetzner refuses ``value`` as the value of label ``key``; empty when it takes it."""
    if value and _LABEL_NAME.fullmatch(value) is None:
        return f"the value of label {key!r} {_unfit(value)}"
    return ""


def _unfit(text: str) -> str:
    """What is wrong with a label name or value Hetzner refuses."""
    if len(text) > 63:
        return f"has {len(text)} characters, more than Hetzner's 63: shorten it"
    return "has a character Hetzner refuses there, or one at its start or end: change it"


def labels_problem(labels: Mapping[str, str]) -> str:
    """Why Hetzner would refuse these labels, one sentence with the rule; empty when none."""
    for key, value in labels.items():
        why = label_key_problem(key) or label_value_problem(key, value)
        if why:
            return f"{why} (Hetzner: {LABEL_RULE})"
    return ""


def selector_problem(selector: str) -> str:
    """Why ``selector`` cannot be read as a Hetzner label selector; empty when it can.

    A term's value may not be empty (``role==``): an empty value selects only resources
    whose label is empty, which is almost always a value left out; ``role`` and ``!role``
    say "has the label" and "has it not".
    """
    depth, term, terms = 0, "", []
    for char in selector:
        depth += (char == "(") - (char == ")")
        if depth < 0 or depth > 1:
            return "its parentheses do not pair up"
        if char == "," and depth == 0:
            terms.append(term)
            term = ""
        else:
            term += char
    if depth:
        return "its parentheses do not pair up"
    for raw in [*terms, term]:
        why = _term_problem(raw.strip())
        if why:
            return why
    return ""


def _term_problem(term: str) -> str:
    if not term:
        return "it has an empty term (a ',' too many)"
    keys: list[str] = []
    values: list[str] = []
    if match := _ABSENT.fullmatch(term):
        keys = [match.group(1)]
    elif match := _SET.fullmatch(term):
        keys, values = [match.group(1)], [v.strip() for v in match.group(3).split(",")]
    elif match := _COMPARE.fullmatch(term):
        keys, values = [match.group(1)], [match.group(3)]
    elif _EXISTS.fullmatch(term):
        keys = [term]
    else:
        return f"term {term!r} is none of its forms"
    for key in keys:
        if label_key_problem(key, selecting=True):
            return f"term {term!r}: {label_key_problem(key, selecting=True)}"
    for value in values:
        if not value:
            return f"term {term!r} has no value"
        if label_value_problem(keys[0], value):
            return f"term {term!r}: {label_value_problem(keys[0], value)}"
    return ""


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

    kind: ClassVar[str] = KIND
    replacing: ClassVar[frozenset[str]] = frozenset({"image", "imageSelector"})
    """Hetzner boots an image at create only; public addresses, networks, placement group
    (the plugin powers the server off for the first and last) and labels change in place.
    A snapshot found anew by its selector only applies to new machines."""

    ipv4: bool = True
    ipv6: bool = True
    network: str = ""
    placement_group: str = ""
    image: str = ""
    image_selector: str = ""
    labels: dict[str, str] = Field(default_factory=dict)

    @field_validator("image", mode="before")
    @classmethod
    def _image_id(cls, image: object) -> object:
        """An image id as YAML reads it unquoted (``image: 300000005``) is the id."""
        return str(image) if isinstance(image, int) and not isinstance(image, bool) else image

    _numbers = field_validator("labels", mode="before")(numbers_as_text)

    @field_validator("labels")
    @classmethod
    def _labels(cls, labels: dict[str, str]) -> dict[str, str]:
        why = labels_problem(labels)
        if why:
            raise ValueError(why)
        return labels

    @field_validator("image_selector")
    @classmethod
    def _selector(cls, selector: str) -> str:
        why = selector_problem(selector) if selector else ""
        if why:
            raise ValueError(
                f"{selector!r} cannot be read as a label selector: {why}; {SELECTOR_RULE}"
            )
        return selector

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

    def pool_refusal(self, pool: PoolLike) -> tuple[str, str] | None:
        """A pool in a spread group needs a ``max`` within the group's limit."""
        if self.placement_group and (pool.max is None or pool.max > SPREAD_LIMIT):
            return "max", spread_refusal(pool.name, pool.max)
        return None

    @classmethod
    def pools_refusal(cls, pools: Iterable[PoolLike]) -> str:
        """Pools sharing a spread group whose maxes could pass its limit together (a pool
        whose own max is refused is left to its own refusal)."""
        groups: dict[str, list[PoolLike]] = {}
        for pool in pools:
            options = pool.given(cls)
            alone = options is not None and options.pool_refusal(pool) is None
            if options is not None and options.placement_group and alone:
                groups.setdefault(options.placement_group, []).append(pool)
        for group, members in groups.items():
            total = sum(p.max or 0 for p in members)
            if len(members) > 1 and total > SPREAD_LIMIT:
                names = ", ".join(p.name for p in members)
                return (
                    f"pools {names} share placement group {group} with maxes adding up to "
                    f"{total}: a spread group holds at most {SPREAD_LIMIT} servers; lower their "
                    "maxes or give each pool its own group"
                )
        return ""


def spread_refusal(pool: str, limit: int | None) -> str:
    """Why a pool in a spread placement group is refused with this max."""
    has = "no max" if limit is None else f"max {limit}"
    return (
        f"pool {pool} is in a spread placement group but has {has}: Hetzner puts at most "
        f"{SPREAD_LIMIT} servers in one, so set the pool's max to {SPREAD_LIMIT} or less "
        "(split a larger pool into pools of their own groups)"
    )
