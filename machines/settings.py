"""The process's settings for each provider, read from environment variables.

Each reader names the variable that is missing or malformed and never echoes a secret.
``env()`` turns settings back into variables: the Pulumi stack exports exactly these, so an
autoscaler is configured by the stack that made its infrastructure.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from urllib.parse import urlparse

from pydantic import BaseModel, ConfigDict, Field, SecretStr

from machines.arch import DEFAULT_HETZNER_IMAGE
from machines.errors import SettingsError

HCLOUD_TOKEN = "HCLOUD_TOKEN"  # noqa: S105 (the variable's name, not a token)
HCLOUD_ENDPOINT = "HCLOUD_ENDPOINT"
ORCA_HCLOUD_IMAGE = "ORCA_HCLOUD_IMAGE"
ORCA_HCLOUD_SSH_KEYS = "ORCA_HCLOUD_SSH_KEYS"
ORCA_HCLOUD_FIREWALL = "ORCA_HCLOUD_FIREWALL"

AWS_REGION = "AWS_REGION"
AWS_DEFAULT_REGION = "AWS_DEFAULT_REGION"
AWS_ENDPOINT_URL = "AWS_ENDPOINT_URL"
ORCA_EC2_SUBNETS = "ORCA_EC2_SUBNETS"
ORCA_EC2_SECURITY_GROUP = "ORCA_EC2_SECURITY_GROUP"
ORCA_EC2_INSTANCE_PROFILE = "ORCA_EC2_INSTANCE_PROFILE"
ORCA_EC2_IMAGE = "ORCA_EC2_IMAGE"

ORCA_PROVIDER = "ORCA_PROVIDER"
ORCA_OWNER = "ORCA_OWNER"
"""The provider kind and owner of a deployment: ``orca-machines env`` prints them with the
stack's settings, and the CLI's pool commands read them."""

ORCA_REQUEST_TIMEOUT = "ORCA_REQUEST_TIMEOUT"
ORCA_CALL_TIMEOUT = "ORCA_CALL_TIMEOUT"

DEFAULT_HCLOUD_ENDPOINT = "https://api.hetzner.cloud/v1"


class Timeouts(BaseModel):
    """How long one HTTP request may take, and one API call with all its retries."""

    model_config = ConfigDict(frozen=True)

    request: float = Field(default=10.0, gt=0)
    call: float = Field(default=60.0, gt=0)

    @classmethod
    def from_env(cls, environ: Mapping[str, str]) -> Timeouts:
        return cls(
            request=_seconds(environ, ORCA_REQUEST_TIMEOUT, 10.0),
            call=_seconds(environ, ORCA_CALL_TIMEOUT, 60.0),
        )


class HetznerSettings(BaseModel):
    """Settings of the Hetzner provider. The token is a ``SecretStr``: reprs show stars."""

    model_config = ConfigDict(frozen=True)

    token: SecretStr
    endpoint: str = DEFAULT_HCLOUD_ENDPOINT
    image: str = DEFAULT_HETZNER_IMAGE
    ssh_keys: tuple[str, ...] = ()
    firewall: str = ""
    timeouts: Timeouts = Timeouts()

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> HetznerSettings:
        env = os.environ if environ is None else environ
        return cls(
            token=SecretStr(_required(env, HCLOUD_TOKEN, secret=True)),
            endpoint=_url(env, HCLOUD_ENDPOINT) or DEFAULT_HCLOUD_ENDPOINT,
            image=_single(env, ORCA_HCLOUD_IMAGE) or DEFAULT_HETZNER_IMAGE,
            ssh_keys=_names(env, ORCA_HCLOUD_SSH_KEYS),
            firewall=_single(env, ORCA_HCLOUD_FIREWALL),
            timeouts=Timeouts.from_env(env),
        )

    def env(self) -> dict[str, str]:
        """The non-secret variables that reproduce these settings (the token is left out)."""
        return hetzner_env(self.endpoint, self.image, self.ssh_keys, self.firewall)


class Ec2Settings(BaseModel):
    """Settings of the EC2 provider. Credentials come from boto3's default chain."""

    model_config = ConfigDict(frozen=True)

    region: str
    endpoint_url: str = ""
    subnets: dict[str, str]
    security_group: str
    instance_profile: str
    image: str = ""
    timeouts: Timeouts = Timeouts()

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Ec2Settings:
        env = os.environ if environ is None else environ
        region = _single(env, AWS_REGION) or _single(env, AWS_DEFAULT_REGION)
        if not region:
            raise SettingsError(
                f"{AWS_REGION} is not set: name the EC2 region, e.g. {AWS_REGION}=eu-central-1"
            )
        return cls(
            region=region,
            endpoint_url=_url(env, AWS_ENDPOINT_URL),
            subnets=_mapping(env, ORCA_EC2_SUBNETS, "eu-central-1a=subnet-0abc"),
            security_group=_required(env, ORCA_EC2_SECURITY_GROUP),
            instance_profile=_required(env, ORCA_EC2_INSTANCE_PROFILE),
            image=_single(env, ORCA_EC2_IMAGE),
            timeouts=Timeouts.from_env(env),
        )

    def env(self) -> dict[str, str]:
        """The variables that reproduce these settings (credentials are left out)."""
        return ec2_env(
            self.region, self.subnets, self.security_group, self.instance_profile, self.image
        )


def hetzner_env(
    endpoint: str, image: str, ssh_keys: tuple[str, ...] | list[str], firewall: str
) -> dict[str, str]:
    """Variables for a Hetzner deployment; defaults are written out so nothing is implicit."""
    env = {
        HCLOUD_ENDPOINT: endpoint,
        ORCA_HCLOUD_IMAGE: image,
        ORCA_HCLOUD_SSH_KEYS: ",".join(ssh_keys),
        ORCA_HCLOUD_FIREWALL: firewall,
    }
    return {k: v for k, v in env.items() if v}


def ec2_env(
    region: str,
    subnets: Mapping[str, str],
    security_group: str,
    instance_profile: str,
    image: str = "",
) -> dict[str, str]:
    """Variables for an EC2 deployment."""
    env = {
        AWS_REGION: region,
        ORCA_EC2_SUBNETS: ",".join(f"{zone}={subnet}" for zone, subnet in subnets.items()),
        ORCA_EC2_SECURITY_GROUP: security_group,
        ORCA_EC2_INSTANCE_PROFILE: instance_profile,
        ORCA_EC2_IMAGE: image,
    }
    return {k: v for k, v in env.items() if v}


def _single(env: Mapping[str, str], name: str, *, secret: bool = False) -> str:
    """The variable's value, refused when it has spaces or line breaks around it."""
    value = env.get(name, "")
    if value != value.strip():
        shown = "its value" if secret else repr(value)
        raise SettingsError(f"{name} has spaces or a line break around {shown}: remove them")
    return value


def _required(env: Mapping[str, str], name: str, *, secret: bool = False) -> str:
    value = _single(env, name, secret=secret)
    if not value:
        raise SettingsError(f"{name} is not set: this provider needs it")
    return value


def check_url(value: str, example: str) -> str:
    """``value`` without a trailing slash when it is an http(s) URL, else ``ValueError``."""
    value = value.rstrip("/")
    parsed = urlparse(value)
    if parsed.scheme not in ("http", "https") or not parsed.netloc:
        raise ValueError(
            f"{value!r} is not an http(s) URL: give the API's base URL, e.g. {example}"
        )
    return value


_URL_EXAMPLES = {
    HCLOUD_ENDPOINT: DEFAULT_HCLOUD_ENDPOINT,
    AWS_ENDPOINT_URL: "http://127.0.0.1:5000",
}


def _url(env: Mapping[str, str], name: str) -> str:
    value = _single(env, name)
    if not value:
        return ""
    try:
        return check_url(value, _URL_EXAMPLES[name])
    except ValueError as error:
        raise SettingsError(f"{name}={error}") from None


def _items(env: Mapping[str, str], name: str, example: str) -> list[str]:
    value = env.get(name, "")
    if not value:
        return []
    items = value.split(",")
    for position, item in enumerate(items, start=1):
        if not item.strip():
            raise SettingsError(
                f"{name} has an empty item (number {position}) in {value!r}: "
                f"separate items with single commas, e.g. {example}"
            )
        if item != item.strip():
            raise SettingsError(
                f"{name} item {position} ({item!r}) has spaces around it: "
                f"separate items with commas only, e.g. {example}"
            )
    return items


def _names(env: Mapping[str, str], name: str) -> tuple[str, ...]:
    items = _items(env, name, "ops,ci")
    duplicates = sorted({item for item in items if items.count(item) > 1})
    if duplicates:
        raise SettingsError(f"{name} names {', '.join(duplicates)} more than once")
    return tuple(items)


def _mapping(env: Mapping[str, str], name: str, example: str) -> dict[str, str]:
    items = _items(env, name, example)
    if not items:
        raise SettingsError(f"{name} is not set: map locations to subnets, e.g. {example}")
    mapping: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if (
            not sep
            or not key.strip()
            or not value.strip()
            or key != key.strip()
            or (value != value.strip())
        ):
            raise SettingsError(f"{name} item {item!r} is not LOCATION=ID: write it like {example}")
        if key in mapping:
            raise SettingsError(f"{name} names location {key!r} more than once")
        mapping[key] = value
    return mapping


def _seconds(env: Mapping[str, str], name: str, default: float) -> float:
    value = _single(env, name)
    if not value:
        return default
    try:
        seconds = float(value)
    except ValueError:
        seconds = -1.0
    if not seconds > 0 or seconds == float("inf"):
        raise SettingsError(f"{name}={value!r} is not a number of seconds above zero")
    return seconds
