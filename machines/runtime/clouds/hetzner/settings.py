"""Settings of the Hetzner provider, from environment variables and back."""

from __future__ import annotations

import os
from collections.abc import Mapping

from pydantic import BaseModel, ConfigDict, SecretStr

from machines.runtime.arch import AMD64, ARM64, docker_arch
from machines.runtime.errors import SettingsError
from machines.runtime.models import Market
from machines.runtime.settings import Freshness, Timeouts, names, required, single, url

HCLOUD_TOKEN = "HCLOUD_TOKEN"  # noqa: S105 (the variable's name, not a token)
HCLOUD_ENDPOINT = "HCLOUD_ENDPOINT"
ORCA_HCLOUD_IMAGE = "ORCA_HCLOUD_IMAGE"
ORCA_HCLOUD_SSH_KEYS = "ORCA_HCLOUD_SSH_KEYS"
ORCA_HCLOUD_FIREWALL = "ORCA_HCLOUD_FIREWALL"
SETTINGS = (HCLOUD_ENDPOINT, ORCA_HCLOUD_IMAGE, ORCA_HCLOUD_SSH_KEYS, ORCA_HCLOUD_FIREWALL)
"""The variables ``hetzner_env`` writes: what a stack's settings say of Hetzner Cloud
(``Cloud.settings``)."""

DEFAULT_HCLOUD_ENDPOINT = "https://api.hetzner.cloud/v1"
DEFAULT_HETZNER_IMAGE = "ubuntu-24.04"

CLOUD = "Hetzner Cloud"

_ARCHS = {AMD64: "x86", ARM64: "arm"}


def hetzner_arch(arch: str) -> str:
    """Hetzner's name (``x86``/``arm``) for a Docker architecture name."""
    return _ARCHS.get(docker_arch(arch), arch)


NO_STOCK_CODES = frozenset({"resource_unavailable", "placement_error", "no_space_left_in_location"})
"""What Hetzner answers when it has no capacity for a type in a location right now (here,
beside the settings, so automation reads a failed engine run by it without hcloud)."""
ACCOUNT_LIMIT_CODES = frozenset({"resource_limit_exceeded"})
"""What Hetzner answers when the project is at one of its limits (servers, cores, primary
IPs, ...): every create of the project fails so, whatever its type or location, until a
resource goes or Hetzner raises the limit (the API does not list the limits, hcloud-go #302)."""
ACCOUNT_LIMIT_HELP = (
    "delete servers the project no longer needs, or ask Hetzner to raise the project's limits "
    "(Cloud Console: the project's Limits page, https://console.hetzner.cloud/limits)"
)
"""How a project at its limit gets room again, for the answer that says it is."""
MARKETS = frozenset({Market.ON_DEMAND})
"""Hetzner Cloud sells on-demand servers only: a pool of another market is refused."""
TOKEN_LENGTH = 64
"""Hetzner Cloud's API tokens have exactly this many characters; the official clients and the
Terraform/Pulumi provider refuse any other before sending it."""


def hetzner_token(env: Mapping[str, str]) -> str:
    """``HCLOUD_TOKEN``, refused (never shown) unless it has the length Hetzner's tokens have."""
    token = required(env, HCLOUD_TOKEN, secret=True)
    if len(token) != TOKEN_LENGTH:
        raise SettingsError(
            f"{HCLOUD_TOKEN} has {len(token)} characters, but a Hetzner Cloud API token has "
            f"exactly {TOKEN_LENGTH}: copy the whole token (Cloud Console, project, Security, "
            "API tokens; it is shown once, so make a new one if it is lost)"
        )
    return token


class HetznerSettings(BaseModel):
    """Settings of the Hetzner provider. The token is a ``SecretStr``: reprs show stars."""

    model_config = ConfigDict(frozen=True)

    token: SecretStr
    endpoint: str = DEFAULT_HCLOUD_ENDPOINT
    image: str = DEFAULT_HETZNER_IMAGE
    ssh_keys: tuple[str, ...] = ()
    firewall: str = ""
    timeouts: Timeouts = Timeouts()
    freshness: Freshness = Freshness()

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> HetznerSettings:
        env = os.environ if environ is None else environ
        return cls(
            token=SecretStr(hetzner_token(env)),
            endpoint=url(env, HCLOUD_ENDPOINT, DEFAULT_HCLOUD_ENDPOINT) or DEFAULT_HCLOUD_ENDPOINT,
            image=single(env, ORCA_HCLOUD_IMAGE) or DEFAULT_HETZNER_IMAGE,
            ssh_keys=names(env, ORCA_HCLOUD_SSH_KEYS),
            firewall=single(env, ORCA_HCLOUD_FIREWALL),
            timeouts=Timeouts.from_env(env),
            freshness=Freshness.from_env(env),
        )

    def env(self) -> dict[str, str]:
        """The non-secret variables that reproduce these settings (the token is left out)."""
        return hetzner_env(self.endpoint, self.image, self.ssh_keys, self.firewall)


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
