"""Where a machine type can be had now, from the cloud's catalogue.

Hetzner lists per server type the locations it supports, each with ``available`` (in
stock now). EC2 publishes no stock, only the zones that offer a type
(``DescribeInstanceTypeOfferings``); those are shown as offered. A runtime
``Provider.offers(type)``, when the runtime has one, is asked first.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import requests
from pydantic import BaseModel, ConfigDict

from machines.clouds.ec2.settings import Ec2Settings
from machines.clouds.hetzner.settings import HetznerSettings
from machines.errors import MachinesError
from machines.provider import Provider
from machines.secrets import mask


class Stock(BaseModel):
    """The locations where a type is in stock (or, on EC2, offered), or why that is unknown."""

    model_config = ConfigDict(frozen=True)

    locations: tuple[str, ...] = ()
    offered_only: bool = False
    unknown: str = ""

    def text(self) -> str:
        if self.unknown:
            return "unknown"
        shown = ",".join(self.locations) or "none"
        return f"{shown} (offered)" if self.offered_only else shown


def stock(
    kind: str, machine_type: str, provider: Provider | None, environ: Mapping[str, str] | None
) -> Stock:
    """Where ``machine_type`` can be created now."""
    offers = getattr(provider, "offers", None)
    if callable(offers):
        try:
            return Stock(locations=tuple(sorted(str(loc) for loc in offers(machine_type))))
        except MachinesError as error:
            return Stock(unknown=mask(str(error)))
    env = os.environ if environ is None else environ
    try:
        if kind == "hetzner":
            return _hetzner(HetznerSettings.from_env(env), machine_type)
        if kind == "ec2":
            return _ec2(Ec2Settings.from_env(env), machine_type)
    except (MachinesError, requests.RequestException, ValueError, KeyError) as error:
        return Stock(unknown=mask(" ".join(str(error).split()))[:200])
    return Stock(unknown=f"no catalogue for provider {kind}")


def _hetzner(settings: HetznerSettings, machine_type: str) -> Stock:
    answer = requests.get(
        f"{settings.endpoint.rstrip('/')}/server_types",
        params={"name": machine_type},
        headers={"Authorization": f"Bearer {settings.token.get_secret_value()}"},
        timeout=settings.timeouts.request,
    )
    if answer.status_code != 200:
        raise ValueError(f"GET /server_types answered {answer.status_code}")
    types: list[dict[str, Any]] = answer.json()["server_types"]
    if not types:
        raise ValueError(f"Hetzner has no server type {machine_type}")
    places = types[0].get("locations") or []
    if any("available" not in p for p in places):
        return Stock(unknown="this API does not say which locations have stock")
    return Stock(locations=tuple(sorted(str(p["name"]) for p in places if p["available"])))


def _ec2(settings: Ec2Settings, machine_type: str) -> Stock:
    from botocore.exceptions import BotoCoreError, ClientError  # noqa: PLC0415

    from machines.clouds.ec2.client import client  # noqa: PLC0415 (loads boto3)

    try:
        answer = client(settings, None).describe_instance_type_offerings(
            LocationType="availability-zone",
            Filters=[{"Name": "instance-type", "Values": [machine_type]}],
        )
    except (BotoCoreError, ClientError) as error:
        return Stock(unknown=mask(" ".join(str(error).split()))[:200])
    zones = {str(o["Location"]) for o in answer.get("InstanceTypeOfferings", [])}
    return Stock(locations=tuple(sorted(zones)), offered_only=True)
