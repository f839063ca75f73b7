"""The configuration of one deployment (a Pulumi stack), validated without Pulumi.

A stack's ``Pulumi.<stack>.yaml`` says which cloud its pools run on, who owns them and what
shared infrastructure they use. ``load`` checks it all before a resource is declared, and each
error names the stack and the key (``stack local: pools[1].size: must be >= 0``), so the
autoscaler and the CLI can validate a stack file the way the Pulumi program does.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Literal

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
    model_validator,
)
from pydantic.alias_generators import to_camel
from pydantic_core import ErrorDetails

from machines.arch import DEFAULT_HETZNER_IMAGE
from machines.clouds.ec2.settings import ec2_env
from machines.clouds.hetzner.settings import hetzner_env
from machines.errors import SettingsError
from machines.labels import check_host_name, check_owner, check_pool, machine_name
from machines.settings import DEFAULT_HCLOUD_ENDPOINT, check_url

PROJECT = "orca-machines"
"""The Pulumi project, so the namespace of this program's configuration keys."""

HCLOUD_ENDPOINT_KEY = "hcloud:endpoint"
AWS_REGION_KEY = "aws:region"

CREDENTIALS = {
    "hcloud:token": "HCLOUD_TOKEN",
    "aws:accessKey": "AWS_ACCESS_KEY_ID",
    "aws:secretKey": "AWS_SECRET_ACCESS_KEY",
    "aws:token": "AWS_SESSION_TOKEN",
}
"""Provider configuration keys that hold credentials, and the variable that can carry each."""

SECRET_PLACEHOLDER = "[secret]"  # noqa: S105 (a stand-in, not a secret)
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


class _Model(BaseModel):
    model_config = ConfigDict(
        frozen=True, extra="forbid", hide_input_in_errors=True, alias_generator=to_camel
    )


Name = Annotated[str, Field(min_length=1)]


def _check_port(port: str, *, allow_any: bool) -> str:
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


def _port_as_text(value: object) -> object:
    return str(value) if isinstance(value, int) and not isinstance(value, bool) else value


class Pool(_Model):
    """One pool the stack keeps: ``size`` machines of a type in a location."""

    name: str
    machine_type: Name
    location: Name
    size: StrictInt = Field(ge=0)
    user_data: SecretStr = Field(default=SecretStr(""), repr=False)

    @field_validator("name")
    @classmethod
    def _pool(cls, name: str) -> str:
        return check_pool(name)


def _owned_name(name: str) -> str:
    return check_host_name(name, "name")


class SshKey(_Model):
    """An SSH key the stack creates, named ``<owner>-<name>``."""

    name: str
    public_key: Name

    _name = field_validator("name")(_owned_name)

    @field_validator("public_key")
    @classmethod
    def _one_line(cls, key: str) -> str:
        if len(key.strip().splitlines()) != 1:
            raise ValueError("must be one line: 'ssh-ed25519 AAAA... comment'")
        return key.strip()


class FirewallRule(_Model):
    """A Hetzner firewall rule; ``port`` only for tcp and udp."""

    direction: Literal["in", "out"] = "in"
    protocol: Literal["tcp", "udp", "icmp", "gre", "esp"]
    port: str = ""
    source_ips: tuple[Name, ...] = ()
    destination_ips: tuple[Name, ...] = ()
    description: str = ""

    _port = field_validator("port", mode="before")(_port_as_text)

    @model_validator(mode="after")
    def _consistent(self) -> FirewallRule:
        if self.protocol in ("tcp", "udp"):
            if not self.port:
                raise ValueError(f"{self.protocol} rules need a port: '22', '80-443' or 'any'")
            _check_port(self.port, allow_any=True)
        elif self.port:
            raise ValueError(f"{self.protocol} rules have no port: remove it")
        inbound = self.direction == "in"
        needed, unused = (
            ("sourceIps", "destinationIps") if inbound else ("destinationIps", "sourceIps")
        )
        if not (self.source_ips if inbound else self.destination_ips):
            raise ValueError(f"an {self.direction}bound rule needs {needed}")
        if self.destination_ips if inbound else self.source_ips:
            raise ValueError(f"an {self.direction}bound rule has no {unused}: remove it")
        return self


class Firewall(_Model):
    """A Hetzner firewall the stack creates, named ``<owner>-<name>``."""

    name: str
    rules: tuple[FirewallRule, ...] = ()

    _name = field_validator("name")(_owned_name)


class IngressRule(_Model):
    """An inbound rule of an EC2 security group the stack creates."""

    protocol: Literal["tcp", "udp", "icmp", "icmpv6", "all"]
    port: str = ""
    source_ips: tuple[Name, ...] = Field(min_length=1)
    description: str = ""

    _port = field_validator("port", mode="before")(_port_as_text)

    @model_validator(mode="after")
    def _consistent(self) -> IngressRule:
        if self.protocol in ("tcp", "udp"):
            if not self.port:
                raise ValueError(f"{self.protocol} rules need a port: '22' or '8000-9000'")
            _check_port(self.port, allow_any=False)
        elif self.port:
            raise ValueError(f"{self.protocol} rules have no port: remove it")
        return self

    def ports(self) -> tuple[int, int]:
        """EC2's from and to port: every ICMP type is -1, every port of 'all' is 0."""
        if self.protocol in ("icmp", "icmpv6"):
            return -1, -1
        if not self.port:
            return 0, 0
        low, _, high = self.port.partition("-")
        return int(low), int(high or low)

    def ip_protocol(self) -> str:
        """EC2's name of the protocol ('-1' for all)."""
        return "-1" if self.protocol == "all" else self.protocol


class SecurityGroup(_Model):
    """An EC2 security group the stack creates in ``vpc``, named ``<owner>-<name>``.

    It lets in what ``ingress`` says and lets everything out.
    """

    name: str
    vpc: Name
    ingress: tuple[IngressRule, ...] = ()

    _name = field_validator("name")(_owned_name)


class InstanceProfile(_Model):
    """An IAM role for EC2 and its instance profile, both named ``<owner>-<name>``."""

    name: str
    policies: tuple[Name, ...] = ()
    """ARNs of managed policies attached to the role."""

    _name = field_validator("name")(_owned_name)

    @field_validator("policies")
    @classmethod
    def _distinct(cls, policies: tuple[str, ...]) -> tuple[str, ...]:
        twice = sorted({p for p in policies if policies.count(p) > 1})
        if twice:
            raise ValueError(f"names {', '.join(twice)} more than once")
        return policies


def _name_or_object(value: Any) -> str | None:
    if isinstance(value, str):
        return "<name>"
    if isinstance(value, Mapping):
        return "<new>"
    return None


def _either(what: str) -> Discriminator:
    return Discriminator(
        _name_or_object,
        custom_error_type="name_or_object",
        custom_error_message=f"must be the name of an existing {what} or an object to create one",
    )


ExistingName = Annotated[Name, Tag("<name>")]
SshKeyItem = Annotated[ExistingName | Annotated[SshKey, Tag("<new>")], _either("SSH key")]
FirewallItem = Annotated[ExistingName | Annotated[Firewall, Tag("<new>")], _either("firewall")]
SecurityGroupItem = Annotated[
    ExistingName | Annotated[SecurityGroup, Tag("<new>")], _either("security group")
]
InstanceProfileItem = Annotated[
    ExistingName | Annotated[InstanceProfile, Tag("<new>")], _either("instance profile")
]


class _Deployment(_Model):
    """What every deployment has: its provider, owner and pools."""

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
            try:
                for index in (1, pool.size):
                    machine_name(self.owner, pool.name, max(index, 1))
            except ValueError as error:
                found.append(
                    (
                        f"pools[{i}].name",
                        f"{error}; machines are named <owner>-<pool>-<n>, so choose an owner "
                        "(default: the stack's name) and a pool name that make host names",
                    )
                )
        return found


class HetznerDeployment(_Deployment):
    """A deployment on Hetzner Cloud: servers with an image, SSH keys and a firewall."""

    provider: Literal["hetzner"]
    endpoint: str = Field(default=DEFAULT_HCLOUD_ENDPOINT, alias=HCLOUD_ENDPOINT_KEY)
    image: Name = DEFAULT_HETZNER_IMAGE
    ssh_keys: tuple[SshKeyItem, ...] = ()
    firewall: FirewallItem | None = None

    @field_validator("endpoint")
    @classmethod
    def _endpoint(cls, endpoint: str) -> str:
        return check_url(endpoint, DEFAULT_HCLOUD_ENDPOINT)

    def ssh_key_names(self) -> tuple[str, ...]:
        """Every SSH key's cloud name, existing ones as given, created ones owner-prefixed."""
        return tuple(k if isinstance(k, str) else self.owned(k.name) for k in self.ssh_keys)

    def firewall_name(self) -> str:
        """The firewall's cloud name, or empty for none."""
        if self.firewall is None or isinstance(self.firewall, str):
            return self.firewall or ""
        return self.owned(self.firewall.name)

    def env(self) -> dict[str, str]:
        """The runtime's settings for this deployment (``settings.hetzner_env``)."""
        return hetzner_env(self.endpoint, self.image, self.ssh_key_names(), self.firewall_name())

    def problems(self) -> list[tuple[str, str]]:
        found = super().problems()
        names = self.ssh_key_names()
        for i, name in enumerate(names):
            if name in names[:i]:
                found.append((f"sshKeys[{i}]", f"SSH key {name!r} is already in the list"))
        return found


class Ec2Deployment(_Deployment):
    """A deployment on EC2: instances in a subnet per location, a security group, a profile."""

    provider: Literal["ec2"]
    region: Name = Field(alias=AWS_REGION_KEY)
    subnets: dict[Name, Name] = Field(min_length=1)
    security_group: SecurityGroupItem
    instance_profile: InstanceProfileItem
    image: str = ""

    def instance_profile_name(self) -> str:
        """The instance profile's name, existing or created."""
        if isinstance(self.instance_profile, str):
            return self.instance_profile
        return self.owned(self.instance_profile.name)

    def env(self, security_group_id: str = "") -> dict[str, str]:
        """The runtime's settings (``settings.ec2_env``); a created group's id is passed in."""
        if isinstance(self.security_group, str):
            security_group_id = self.security_group
        return ec2_env(
            self.region,
            self.subnets,
            security_group_id,
            self.instance_profile_name(),
            self.image,
        )

    def problems(self) -> list[tuple[str, str]]:
        found = super().problems()
        for i, pool in enumerate(self.pools):
            if pool.location not in self.subnets:
                found.append(
                    (
                        f"pools[{i}].location",
                        f"no subnet for {pool.location!r}: subnets maps "
                        f"{', '.join(sorted(self.subnets))}; add {pool.location}: subnet-...",
                    )
                )
        return found


Deployment = HetznerDeployment | Ec2Deployment

_KINDS: dict[str, type[HetznerDeployment] | type[Ec2Deployment]] = {
    "hetzner": HetznerDeployment,
    "ec2": Ec2Deployment,
}
_PROVIDER_KEYS = {HetznerDeployment: (HCLOUD_ENDPOINT_KEY,), Ec2Deployment: (AWS_REGION_KEY,)}


def load(config: StackConfig, stack: str) -> Deployment:
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
    cls = _KINDS.get(kind) if isinstance(kind, str) else None
    if cls is None:
        shown = "is not set" if kind is None else f"{kind!r} is not a provider"
        problems.append(("provider", f"{shown}: use {' or '.join(_KINDS)}"))
        raise StackConfigError(stack, problems)
    raw.setdefault("owner", stack)
    for key in _PROVIDER_KEYS[cls]:
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


def _problem(error: ErrorDetails, cls: type[_Deployment]) -> tuple[str, str]:
    path = _path(error["loc"])
    kind = error["type"]
    if kind == "extra_forbidden":
        return path, _unknown(str(error["loc"][-1]), len(error["loc"]) == 1, cls)
    if kind == "missing" and path == AWS_REGION_KEY:
        return path, f"is not set: name the stack's region (pulumi config set {path} ...)"
    if kind == "greater_than_equal":
        return path, f"must be >= {error.get('ctx', {}).get('ge')}"
    if kind in _MESSAGES:
        return path, _MESSAGES[kind]
    message = error["msg"].removeprefix("Value error, ")
    if message.startswith("Input should be "):
        message = "must be " + message.removeprefix("Input should be ")
    return path, message


def _aliases(cls: type[BaseModel]) -> set[str]:
    return {field.alias or name for name, field in cls.model_fields.items()}


_ALL_KEYS = sorted(
    set().union(
        *(
            _aliases(model)
            for model in (
                HetznerDeployment,
                Ec2Deployment,
                Pool,
                SshKey,
                Firewall,
                FirewallRule,
                SecurityGroup,
                IngressRule,
                InstanceProfile,
            )
        )
    )
)


def _unknown(key: str, top: bool, cls: type[_Deployment]) -> str:
    if top:
        for kind, other in _KINDS.items():
            if other is not cls and key in _aliases(other):
                return f"is a setting of provider {kind}, not of this stack's provider: remove it"
    close = difflib.get_close_matches(key, _ALL_KEYS, n=1)
    hint = f" (did you mean {close[0]}?)" if close else ""
    return f"unknown key{hint}: remove it or fix its spelling"
