"""Labels, tags and name rules: the one definition the runtime and the Pulumi program share.

Every machine of a pool carries ``orca=pool``, ``orca-pool=<pool>`` and, when the deployment
has an owner, ``orca-owner=<owner>``. Hetzner calls them labels and EC2 tags; the keys and
values are the same on both, so a pool looks alike on every cloud.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping

from machines.runtime.errors import InvalidNameError

ORCA_LABEL = "orca"
ORCA_VALUE = "pool"
POOL_LABEL = "orca-pool"
OWNER_LABEL = "orca-owner"
MANAGED_BY_LABEL = "orca-managed-by"
MANAGED_BY_PULUMI = "pulumi"
"""``orca-managed-by=pulumi`` marks a machine the stack keeps (its pool's ``size``); the
autoscaler's own machines (``Provider.create``) carry no such label."""

HOST_NAME_RULE = "1 to 63 characters of a-z, 0-9 and '-', not starting or ending with '-'"
LABEL_VALUE_RULE = (
    "at most 63 characters of A-Z, a-z, 0-9, '-', '_' and '.', "
    "starting and ending with a letter or digit"
)

_HOST_NAME = re.compile(r"[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?")
_LABEL_VALUE = re.compile(r"([A-Za-z0-9]([A-Za-z0-9._-]{0,61}[A-Za-z0-9])?)?")


def numbers_as_text(values: object) -> object:
    """Label or tag values written as whole numbers (``version: 2``, as YAML reads them
    unquoted) as their text; anything else as it is, for the model to judge."""
    if isinstance(values, Mapping):
        return {
            k: str(v) if isinstance(v, int) and not isinstance(v, bool) else v
            for k, v in values.items()
        }
    return values


def is_host_name(name: str) -> bool:
    """True when ``name`` is a host name every cloud here accepts for a machine."""
    return _HOST_NAME.fullmatch(name) is not None


def is_label_value(value: str) -> bool:
    """True when ``value`` is valid as a Hetzner label value and an EC2 tag value (empty is)."""
    return _LABEL_VALUE.fullmatch(value) is not None


def _text(value: object, what: str, rule: str) -> str:
    """``value`` when it is a string: a caller's ``None`` or number is the package's error."""
    if not isinstance(value, str):
        raise InvalidNameError(f"{what} must be a string ({rule}), not {type(value).__name__}")
    return value


def check_host_name(name: str, what: str = "name") -> str:
    """Return ``name`` when it is a host name, else raise ``InvalidNameError`` naming the rule."""
    if not is_host_name(_text(name, what, HOST_NAME_RULE)):
        raise InvalidNameError(f"{what} {name!r} is not a host name: use {HOST_NAME_RULE}")
    return name


def check_pool(pool: str, what: str = "pool") -> str:
    """Return ``pool`` when it is a usable pool name: a non-empty label value."""
    if not _text(pool, what, LABEL_VALUE_RULE):
        raise InvalidNameError(f"{what} is empty: name the pool ({LABEL_VALUE_RULE})")
    if not is_label_value(pool):
        raise InvalidNameError(f"{what} {pool!r} is not a label value: use {LABEL_VALUE_RULE}")
    return pool


def check_owner(owner: str, what: str = "owner") -> str:
    """Return ``owner`` when it is a label value; empty means 'no owner label'."""
    if not is_label_value(_text(owner, what, LABEL_VALUE_RULE)):
        raise InvalidNameError(f"{what} {owner!r} is not a label value: use {LABEL_VALUE_RULE}")
    return owner


def owner_labels(owner: str) -> dict[str, str]:
    """The labels (or tags) of shared infrastructure a deployment makes: its owner only."""
    return {OWNER_LABEL: owner} if owner else {}


def pool_labels(pool: str, owner: str) -> dict[str, str]:
    """The labels (or tags) of a machine of ``pool`` made for ``owner``."""
    return {ORCA_LABEL: ORCA_VALUE, POOL_LABEL: pool, **owner_labels(owner)}


def stack_labels(pool: str, owner: str) -> dict[str, str]:
    """The labels (or tags) of a machine the stack keeps: a pool machine's, plus
    ``orca-managed-by=pulumi``, which the runtime never deletes."""
    return {**pool_labels(pool, owner), MANAGED_BY_LABEL: MANAGED_BY_PULUMI}


def managed_by(labels: Mapping[str, str]) -> str:
    """Who keeps a pool machine: ``"pulumi"`` for the stack's, ``""`` for the autoscaler's."""
    return MANAGED_BY_PULUMI if labels.get(MANAGED_BY_LABEL) == MANAGED_BY_PULUMI else ""


def pool_selector(pool: str, owner: str) -> str:
    """Hetzner label selector for exactly the machines of ``pool`` and ``owner``.

    An empty owner selects machines without an owner label, so an owner-less deployment
    never sees (or deletes) a machine that belongs to an owned one.
    """
    owner_term = f"{OWNER_LABEL}={owner}" if owner else f"!{OWNER_LABEL}"
    return f"{ORCA_LABEL}={ORCA_VALUE},{POOL_LABEL}={pool},{owner_term}"


def owner_selector(owner: str) -> str:
    """Hetzner label selector for every pool machine of ``owner``, whatever its pool."""
    owner_term = f"{OWNER_LABEL}={owner}" if owner else f"!{OWNER_LABEL}"
    return f"{ORCA_LABEL}={ORCA_VALUE},{owner_term}"


def owners_selector(owners: Collection[str]) -> str:
    """Hetzner label selector for every pool machine of any of ``owners``, each named (an
    empty owner is selected by the label's absence, which no set can say)."""
    return f"{ORCA_LABEL}={ORCA_VALUE},{OWNER_LABEL} in ({','.join(sorted(owners))})"


def owner_among(labels: Mapping[str, str], owners: Collection[str]) -> str | None:
    """The one of ``owners`` whose pool machine the labels mark, else None."""
    return next((owner for owner in owners if belongs_to(labels, owner)), None)


def belongs_to(labels: Mapping[str, str], owner: str, pool: str | None = None) -> bool:
    """True when labels mark a pool machine of ``owner`` (and of ``pool``, when given).

    With an empty owner the owner label must be absent, as ``pool_selector`` asks the API:
    even an empty ``orca-owner`` value marks a machine someone else claimed.
    """
    if labels.get(ORCA_LABEL) != ORCA_VALUE:
        return False
    if owner:
        if labels.get(OWNER_LABEL) != owner:
            return False
    elif OWNER_LABEL in labels:
        return False
    return pool is None or labels.get(POOL_LABEL) == pool


def whose(owner: str) -> str:
    """``owner`` in a message: ``owner 'prod'``, or ``no owner``."""
    return f"owner {owner!r}" if owner else "no owner"


def keeping_stack(stack: str, owner: str) -> str:
    """The stack that keeps ``owner``'s machines, in a message: ``stack heron`` when its
    name is known (``ORCA_STACK``), else ``the stack of owner 'egret'``: an owner is not a
    stack's name (every example stack sets ``owner: prod``, whatever its copy is called)."""
    return f"stack {stack}" if stack else f"the stack of {whose(owner)}"


def not_ours(labels: Mapping[str, str], owner: str, word: str = "label") -> str:
    """Why ``labels`` do not mark a pool machine of ``owner``, empty when they do; ``word``
    is the cloud's name for a label (``tag`` on EC2)."""
    if belongs_to(labels, owner):
        return ""
    if labels.get(ORCA_LABEL) != ORCA_VALUE:
        return f"has no {ORCA_LABEL}={ORCA_VALUE} {word}"
    theirs = labels.get(OWNER_LABEL, "")
    if not theirs:
        return f"has no {OWNER_LABEL} {word}"
    return f"belongs to owner {theirs!r} ({OWNER_LABEL} {word})"


STACK_DOMAIN = "stack"
"""The last label of the cloud name of every machine the stack keeps. The runtime's names
are host names without dots (``HOST_NAME_RULE``), so a stack's machine and one the
autoscaler makes never want the same name, on any cloud, whatever names the autoscaler
picks; the machine's host name is the part before the dot."""


def machine_host(owner: str, pool: str, index: int) -> str:
    """The ``index``-th machine a stack keeps in a pool, as a host name and as the
    resource's name in the stack: ``<owner>-<pool>-<index>``."""
    parts = [p for p in (owner, pool) if p]
    return check_host_name("-".join([*parts, str(index)]), "machine name")


def machine_name(owner: str, pool: str, index: int) -> str:
    """The cloud name of the ``index``-th machine a stack keeps in a pool:
    ``<owner>-<pool>-<index>.stack``, a form no runtime name has."""
    return f"{machine_host(owner, pool, index)}.{STACK_DOMAIN}"


def is_machine_key(key: str, owner: str, pool: str) -> bool:
    """True when ``key`` is the name in the stack of one of ``pool``'s machines."""
    prefix = "-".join([*(p for p in (owner, pool) if p), ""])
    return key.startswith(prefix) and key[len(prefix) :].isdigit()


def machine_index(key: str, owner: str, pool: str) -> int | None:
    """The index of the pool's machine ``key`` names in the stack (``<owner>-<pool>-<n>``),
    None when it names none of the pool's machines."""
    if not is_machine_key(key, owner, pool):
        return None
    return int(key.rsplit("-", 1)[1])


def machine_key(name: str) -> str:
    """The name in the stack of the stack's machine whose cloud name is ``name``: the part
    before ``.stack`` (a machine of the older form is named the same in both)."""
    return name.removesuffix(f".{STACK_DOMAIN}")


def is_stack_name(name: str) -> bool:
    """True when ``name`` has the form of the cloud names the stack gives its machines
    (stacks older than that form named them ``<owner>-<pool>-<n>``)."""
    host, dot, domain = name.partition(".")
    return bool(dot) and domain == STACK_DOMAIN and is_host_name(host)
