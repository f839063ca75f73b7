"""A stack's configuration, validated: what every cloud's deployment shares, and ``load``.

Each cloud's own settings live in ``machines.program.<cloud>.config``; ``load`` finds the
one the stack's ``provider`` names through ``CLOUDS``. Plain pydantic: no Pulumi here.
"""

from __future__ import annotations

import difflib
import importlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, ClassVar

from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    SecretStr,
    StrictInt,
    Tag,
    ValidationError,
    field_validator,
)
from pydantic.alias_generators import to_camel
from pydantic_core import ErrorDetails

from machines.errors import SettingsError
from machines.labels import check_host_name, check_owner, check_pool, machine_name
from machines.models import Market
from machines.program.clouds import CLOUDS
from machines.secrets import MASK
from machines.settings import (
    AWS_ACCESS_KEY_ID,
    AWS_SECRET_ACCESS_KEY,
    AWS_SESSION_TOKEN,
    HCLOUD_TOKEN,
    market_refusal,
    pool_market_env,
    pool_max_env,
)

PROJECT = "orca-machines"
"""The Pulumi project, so the namespace of this program's configuration keys."""

CREDENTIALS = {
    "hcloud:token": HCLOUD_TOKEN,
    "aws:accessKey": AWS_ACCESS_KEY_ID,
    "aws:secretKey": AWS_SECRET_ACCESS_KEY,
    "aws:token": AWS_SESSION_TOKEN,
}
"""Provider configuration keys that hold credentials, and the variable that can carry each."""

SECRET_PLACEHOLDER = MASK
"""What stands for an encrypted value of a stack file, which is checked without decrypting it."""


class StackConfigError(SettingsError):
    """A stack's configuration is invalid: one line per problem, each naming stack and key."""

    def __init__(self, stack: str, problems: Sequence[tuple[str, str]]) -> None:
        self.stack = stack
        self.problems = tuple(problems)
        super().__init__("\n".join(f"stack {stack}: {key}: {why}" for key, why in self.problems))


@dataclass(frozen=True)
class StackConfig:
    """A stack's configuration as Pulumi hands it to a program.

    Keys are ``namespace:name``; values are strings, objects and lists JSON-encoded;
    ``secret_keys`` are the keys set with ``--secret``.
    """

    values: Mapping[str, str]
    secret_keys: frozenset[str] = frozenset()

    @classmethod
    def from_stack_file(cls, config: Mapping[str, object]) -> StackConfig:
        """From the ``config:`` mapping of a parsed ``Pulumi.<stack>.yaml``.

        Encrypted values (``{secure: ...}``) are not decrypted: ``SECRET_PLACEHOLDER`` stands
        for them and their key counts as secret, as Pulumi marks it.
        """
        values: dict[str, str] = {}
        secret_keys: set[str] = set()
        for key, value in config.items():
            plain, secret = _unwrap_secure(value)
            values[key] = _encode(plain)
            if secret:
                secret_keys.add(key)
        return cls(values, frozenset(secret_keys))


def _unwrap_secure(value: object) -> tuple[object, bool]:
    if isinstance(value, Mapping):
        if set(value) == {"secure"}:
            return SECRET_PLACEHOLDER, True
        items = {k: _unwrap_secure(v) for k, v in value.items()}
        return {k: v for k, (v, _) in items.items()}, any(s for _, s in items.values())
    if isinstance(value, list):
        unwrapped = [_unwrap_secure(v) for v in value]
        return [v for v, _ in unwrapped], any(s for _, s in unwrapped)
    return value, False


def _encode(value: object) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, Mapping | list):
        return json.dumps(value, default=str)
    return str(value)


def _decode(value: str) -> object:
    """An object or list when the value is one JSON-encoded, else the string itself."""
    if value[:1] in ("{", "["):
        try:
            decoded: object = json.loads(value)
        except json.JSONDecodeError:
            return value
        return decoded
    return value


class Model(BaseModel):
    model_config = ConfigDict(
        frozen=True, extra="forbid", hide_input_in_errors=True, alias_generator=to_camel
    )


Name = Annotated[str, Field(min_length=1)]


def check_port(port: str, *, allow_any: bool) -> str:
    if allow_any and port == "any":
        return port
    low, _, high = port.partition("-")
    if not (low.isdigit() and (high.isdigit() or not high)):
        ranges = "'22', '8000-9000' or 'any'" if allow_any else "'22' or '8000-9000'"
        raise ValueError(f"port {port!r} is not a port or a range: write {ranges}")
    first, last = int(low), int(high or low)
    if not 1 <= first <= last <= 65535:
        raise ValueError(f"port {port!r} is not within 1-65535 with the low port first")
    return port


def check_rule_port(protocol: str, port: str, *, allow_any: bool, example: str) -> None:
    """A firewall or security group rule's port: needed by tcp and udp, refused by others."""
    if protocol in ("tcp", "udp"):
        if not port:
            raise ValueError(f"{protocol} rules need a port: {example}")
        check_port(port, allow_any=allow_any)
    elif port:
        raise ValueError(f"{protocol} rules have no port: remove it")


def port_as_text(value: object) -> object:
    return str(value) if isinstance(value, int) and not isinstance(value, bool) else value


MAX_POOL_SIZE = 1000
"""The most machines one pool of a stack keeps: the program declares one resource per
machine, and BENCHMARKS.md shows what a pool of this size costs to evaluate."""

NO_HYPHEN = (
    "has a '-': names made of it are <owner>-<name>, so with a '-' inside, owners 'a' and "
    "'a-b' could make the same name; use letters and digits only, e.g. {example}"
)


def _without_hyphen(name: str, example: str) -> str:
    """A stack's pool or shared name, refused with a '-' inside: the owner's name is what
    comes before the last '-' of what the stack makes, so two owners never share a name."""
    if "-" in name:
        raise ValueError(f"{name!r} " + NO_HYPHEN.format(example=example))
    return name


class Pool(Model):
    """One pool the stack keeps: ``size`` machines of a type in a location.

    ``max`` (optional) bounds the pool's machines, the stack's and the autoscaler's
    together: the runtime's ``create`` refuses to pass it (``ORCA_POOL_MAX``). ``market``
    is where the pool's machines, kept and autoscaled, are bought (``ORCA_POOL_MARKET``).
    """

    name: str
    machine_type: Name
    location: Name
    size: StrictInt = Field(ge=0, le=MAX_POOL_SIZE)
    max: StrictInt | None = Field(default=None, ge=1)
    market: Market = Market.ON_DEMAND
    user_data: SecretStr = Field(default=SecretStr(""), repr=False)

    @field_validator("name")
    @classmethod
    def _pool(cls, name: str) -> str:
        return _without_hyphen(check_pool(name), "x86 or arm64")


def owned_name(name: str) -> str:
    return _without_hyphen(check_host_name(name, "name"), "pools or workers")


def _name_or_object(value: Any) -> str | None:
    if isinstance(value, str):
        return "<name>"
    if isinstance(value, Mapping):
        return "<new>"
    return None


def either(what: str) -> Discriminator:
    return Discriminator(
        _name_or_object,
        custom_error_type="name_or_object",
        custom_error_message=f"must be the name of an existing {what} or an object to create one",
    )


ExistingName = Annotated[Name, Tag("<name>")]


class BaseDeployment(Model):
    """What every deployment has: its provider, owner and pools.

    Each cloud's deployment adds its settings, names the provider configuration keys it
    reads (``provider_keys``) and the models it nests (``models``, for spelling hints).
    """

    provider_keys: ClassVar[tuple[str, ...]] = ()
    provider_namespace: ClassVar[str] = ""
    provider_config: ClassVar[frozenset[str]] = frozenset()
    """The namespace of the cloud provider plugin's configuration (``hcloud``), and the keys
    of it the official provider reads: any other key there is a typo the plugin would
    ignore, sending the stack to the cloud's defaults (its real API)."""
    missing_hints: ClassVar[dict[str, str]] = {}
    models: ClassVar[tuple[type[BaseModel], ...]] = ()
    cloud: ClassVar[str] = ""
    markets: ClassVar[frozenset[Market]] = frozenset({Market.ON_DEMAND})
    """The cloud's name and the markets it sells (``clouds.<kind>.settings``)."""

    provider: str
    owner: str
    pools: tuple[Pool, ...]

    @field_validator("owner")
    @classmethod
    def _owner(cls, owner: str) -> str:
        if not owner:
            raise ValueError("is empty: a stack's machines always carry an owner label")
        return check_owner(owner)

    def owned(self, name: str) -> str:
        """The cloud name of shared infrastructure the stack creates: ``<owner>-<name>``."""
        return f"{self.owner}-{name}"

    def problems(self) -> list[tuple[str, str]]:
        """What the field rules cannot see: names that clash or make no host names."""
        found: list[tuple[str, str]] = []
        first: dict[str, int] = {}
        for i, pool in enumerate(self.pools):
            if pool.name in first:
                found.append(
                    (f"pools[{i}].name", f"pool {pool.name!r} is already pools[{first[pool.name]}]")
                )
                continue
            first[pool.name] = i
            refused = market_refusal(self.cloud, self.markets, pool.name, pool.market)
            if refused:
                found.append((f"pools[{i}].market", refused))
            if pool.max is not None and pool.max < pool.size:
                found.append(
                    (
                        f"pools[{i}].max",
                        f"is {pool.max}, below the pool's size {pool.size}: raise max or "
                        "lower size (max counts the stack's machines too)",
                    )
                )
            try:
                for index in (1, pool.size):
                    machine_name(self.owner, pool.name, max(index, 1))
            except ValueError as error:
                found.append(
                    (
                        f"pools[{i}].name",
                        f"{error}; machines are named <owner>-<pool>-<n>.stack, so choose an "
                        "owner (default: the stack's name) and a pool name that make host names",
                    )
                )
        return found

    def env(self) -> dict[str, str]:
        """The runtime's settings for this deployment, as variables."""
        raise NotImplementedError

    def catalogue_env(self) -> dict[str, str]:
        """The runtime's settings before the stack has made what it creates: enough for a
        provider that only reads the cloud's catalogue (``arch``, ``sells``)."""
        return self.env()

    def pool_max(self) -> dict[str, int]:
        """Each pool's max, for pools that have one (the ``ORCA_POOL_MAX`` variable)."""
        return {pool.name: pool.max for pool in self.pools if pool.max is not None}

    def pool_market(self) -> dict[str, Market]:
        """Each pool's market (the ``ORCA_POOL_MARKET`` variable leaves on-demand out)."""
        return {pool.name: pool.market for pool in self.pools}

    def runtime_env(self, settings: Mapping[str, str]) -> dict[str, str]:
        """The cloud's ``settings`` with what the pools add: their max and their market."""
        return {
            **settings,
            **pool_max_env(self.pool_max()),
            **pool_market_env(self.pool_market()),
        }


def load(config: StackConfig, stack: str) -> BaseDeployment:
    """The validated deployment of ``stack``; raise ``StackConfigError`` listing every problem."""
    problems = _plain_credentials(config)
    prefix = f"{PROJECT}:"
    raw: dict[str, object] = {}
    for key, value in config.values.items():
        if key.startswith(prefix):
            name = key.removeprefix(prefix)
            if ":" in name:
                problems.append((name, "unknown key: remove it or fix its spelling"))
            else:
                raw[name] = _decode(value)
    kind = raw.get("provider")
    kinds = deployments()
    cls = kinds.get(kind) if isinstance(kind, str) else None
    if cls is None:
        shown = "is not set" if kind is None else f"{kind!r} is not a provider"
        problems.append(("provider", f"{shown}: use {' or '.join(kinds)}"))
        raise StackConfigError(stack, problems)
    raw.setdefault("owner", stack)
    problems.extend(_provider_config_problems(config, cls))
    for key in cls.provider_keys:
        if key in config.values:
            raw[key] = config.values[key]
    try:
        deployment = cls.model_validate(raw)
    except ValidationError as error:
        problems.extend(_problem(e, cls) for e in error.errors(include_url=False))
    else:
        problems.extend(deployment.problems())
    if problems:
        raise StackConfigError(stack, problems)
    return deployment


def plain_user_data(config: StackConfig, deployment: BaseDeployment) -> list[str]:
    """Warnings for pools whose user data is plain in the stack's configuration: Pulumi's
    update history keeps the configuration, so plain user data stays there for good."""
    key = f"{PROJECT}:pools"
    if key in config.secret_keys:
        return []
    return [
        f"pools[{i}].userData of pool {pool.name} is in plain text in the stack's "
        "configuration, and so in every update's history: set it with `pulumi config set "
        f"--path --secret 'pools[{i}].userData' ...`"
        for i, pool in enumerate(deployment.pools)
        if pool.user_data.get_secret_value()
    ]


def _provider_config_problems(
    config: StackConfig, cls: type[BaseDeployment]
) -> list[tuple[str, str]]:
    """Keys of a cloud provider's namespace the provider does not read (``hcloud:endpont``),
    and keys of another cloud's provider: either would be silently ignored."""
    found: list[tuple[str, str]] = []
    others = {d.provider_namespace: k for k, d in deployments().items() if d is not cls}
    for key in sorted(config.values):
        namespace, _, name = key.partition(":")
        if namespace == cls.provider_namespace and name not in cls.provider_config:
            close = difflib.get_close_matches(name, sorted(cls.provider_config), n=1)
            hint = f" (did you mean {namespace}:{close[0]}?)" if close else ""
            found.append(
                (
                    key,
                    f"unknown key of the {namespace} provider{hint}: the provider would ignore "
                    "it and use its default, so fix its spelling or remove it",
                )
            )
        elif namespace in others:
            found.append(
                (
                    key,
                    f"is a setting of provider {others[namespace]}, not of this stack's: remove it",
                )
            )
    return found


def _plain_credentials(config: StackConfig) -> list[tuple[str, str]]:
    return [
        (
            key,
            "is in plain text in the stack's configuration: remove it (pulumi config rm "
            f"{key}) and set it with `pulumi config set --secret {key}`, or set {variable} "
            "in the environment",
        )
        for key, variable in CREDENTIALS.items()
        if config.values.get(key) and key not in config.secret_keys
    ]


def _path(loc: tuple[int | str, ...]) -> str:
    path = ""
    for part in loc:
        if isinstance(part, int):
            path += f"[{part}]"
        elif not (part.startswith("<") and part.endswith(">")):
            path += f".{part}" if path else part
    return path


_MESSAGES = {
    "missing": "is missing",
    "model_type": "must be an object (keys and values)",
    "model_attributes_type": "must be an object (keys and values)",
    "dict_type": "must be an object (keys and values)",
    "tuple_type": "must be a list",
    "list_type": "must be a list",
    "string_too_short": "must not be empty",
}


def _problem(error: ErrorDetails, cls: type[BaseDeployment]) -> tuple[str, str]:
    path = _path(error["loc"])
    kind = error["type"]
    if kind == "extra_forbidden":
        return path, _unknown(str(error["loc"][-1]), len(error["loc"]) == 1, cls)
    if kind == "missing" and path in cls.missing_hints:
        return path, f"is not set: {cls.missing_hints[path]} (pulumi config set {path} ...)"
    if kind == "greater_than_equal":
        return path, f"must be >= {error.get('ctx', {}).get('ge')}"
    if kind == "less_than_equal":
        return path, (
            f"must be <= {error.get('ctx', {}).get('le')}, the largest pool a stack keeps: "
            "split a larger pool into several"
        )
    if kind in _MESSAGES:
        return path, _MESSAGES[kind]
    message = error["msg"].removeprefix("Value error, ")
    if message.startswith("Input should be "):
        message = "must be " + message.removeprefix("Input should be ")
    return path, message


def _aliases(cls: type[BaseModel]) -> set[str]:
    return {field.alias or name for name, field in cls.model_fields.items()}


def _unknown(key: str, top: bool, cls: type[BaseDeployment]) -> str:
    if top:
        for kind, other in deployments().items():
            if other is not cls and key in _aliases(other):
                return f"is a setting of provider {kind}, not of this stack's provider: remove it"
    close = difflib.get_close_matches(key, _all_keys(), n=1)
    hint = f" (did you mean {close[0]}?)" if close else ""
    return f"unknown key{hint}: remove it or fix its spelling"


def _all_keys() -> list[str]:
    """Every key a stack file may use, for 'did you mean' hints."""
    models: list[type[BaseModel]] = [Pool]
    for cls in deployments().values():
        models += [cls, *cls.models]
    return sorted(set().union(*(_aliases(model) for model in models)))


def deployments() -> dict[str, type[BaseDeployment]]:
    """Each provider kind's deployment model, from the clouds the program knows."""
    return {
        kind: importlib.import_module(f"{module}.config").DEPLOYMENT
        for kind, module in CLOUDS.items()
    }
