"""A pool that spans clouds, for tests and benchmarks: the emulator and moto at once.

``Span`` holds both clouds (each a ``testkit.clouds.Cloud``, this process's environment
pointing at both) and the pool ``ci`` of ``PLACES``: two Hetzner locations of cax11, then
EC2's t4g.micro (all arm64). Its members take a place out of stock as each cloud would
(the emulator's control API; EC2's ``InsufficientInstanceCapacity`` from the fault proxy,
since moto never runs out) and look behind the provider's back.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any

from emulator.process import Emulator
from machines.runtime.models import MachineSpec
from machines.runtime.pool import Place
from machines.runtime.provider import Provider
from machines.runtime.span import SpanningProvider
from testkit import moto_server
from testkit.clouds import Cloud
from testkit.fault_proxy import Fault, FaultProxy
from testkit.specs import OWNER

POOL = "ci"
"""The spanning pool."""

PLACES = (
    Place(cloud="hetzner", machine_type="cax11", location="fsn1"),
    Place(cloud="hetzner", machine_type="cax11", location="nbg1"),
    Place(cloud="ec2", machine_type="t4g.micro", location="eu-central-1a"),
)
"""Pool ``ci``'s places, in order of preference: one architecture (arm64) on two clouds."""


FAKE_PLACES = (
    Place.model_construct(cloud="fake", machine_type="f1.arm", location="here"),
    Place(cloud="hetzner", machine_type="cax11", location="fsn1"),
)
"""A pool on the third cloud (``testkit.fake_cloud``, registered by the fixture
``fake_span``) first, then Hetzner: both clouds' ids are numbers. (Built unchecked: the
fake cloud is registered only while its tests run.)"""


def pools_json(
    *places: Place, max: int | None = None, pool: str = POOL, place_order: str = ""
) -> str:
    """``ORCA_POOLS`` with one pool of ``places`` (default ``PLACES``) and ``max``, and a
    one-cloud pool ``lab`` on the home cloud (today's pool, no places)."""
    chosen = places or PLACES
    spanning: dict[str, Any] = {
        "name": pool,
        "places": [p.model_dump(mode="json", by_alias=True, exclude_defaults=True) for p in chosen],
    }
    if max is not None:
        spanning["max"] = max
    if place_order:
        spanning["placeOrder"] = place_order
    lab = {"name": "lab", "machineType": "cx23", "location": "fsn1"}
    return json.dumps([spanning, lab])


@dataclass(frozen=True)
class Span:
    """Both clouds, the environment pointing at both; see the module."""

    hetzner: Cloud
    ec2: Cloud
    emulator: Emulator
    proxy: FaultProxy
    moto_url: str

    def provider(self, owner: str = OWNER) -> SpanningProvider:
        """``Provider.of("hetzner", owner)``, as the autoscaler builds it: spanning."""
        made = Provider.of("hetzner", owner)
        assert isinstance(made, SpanningProvider), made
        return made

    def spec(self, name: str, place: Place = PLACES[0], pool: str = POOL) -> MachineSpec:
        """A machine of ``pool`` at ``place`` (default: the pool's first)."""
        return MachineSpec(
            name=name, machine_type=place.machine_type, location=place.location, pool=pool
        )

    def out_of_stock(self, *places: Place) -> None:
        """From now on, exactly ``places`` have no stock (none: every place has stock)."""
        hetzner = [p for p in places if p.cloud == "hetzner"]
        self.emulator.control.set_stock(
            [{"server_type": p.machine_type, "location": p.location} for p in hetzner]
        )
        if any(p.cloud == "ec2" for p in places):
            no_capacity = Fault(
                "error", "RunInstances", status=500, code="InsufficientInstanceCapacity"
            )
            self.proxy.set_faults(no_capacity)
        else:
            self.proxy.set_faults()

    def stack_config(self, *pools: dict[str, Any]) -> dict[str, Any]:
        """A stack file's ``config:`` of owner ``OWNER`` on both clouds, as this process's
        environment points at them, with ``pools``: Hetzner at home, EC2 under ``ec2:``."""
        env = os.environ
        subnets = dict(item.split("=", 1) for item in env["ORCA_EC2_SUBNETS"].split(","))
        return {
            "hcloud:endpoint": self.emulator.url,
            "aws:region": env["AWS_REGION"],
            "aws:endpoints": [{"ec2": self.proxy.url}],
            "orca-machines:provider": "hetzner",
            "orca-machines:owner": OWNER,
            "orca-machines:ec2": {
                "subnets": subnets,
                "securityGroup": env["ORCA_EC2_SECURITY_GROUP"],
                "instanceProfile": env["ORCA_EC2_INSTANCE_PROFILE"],
            },
            "orca-machines:pools": list(pools),
        }

    def server_posts(self) -> int:
        """Create requests (POST /servers) that reached the emulator so far."""
        return self.hetzner.creates()

    def run_instances(self) -> int:
        """RunInstances requests that reached moto (through the proxy) so far."""
        return self.ec2.creates()

    def instance_tags(self, name: str, owner: str = OWNER) -> dict[str, str]:
        """The tags of ``owner``'s live instance ``name``, straight from moto."""
        instance = moto_server.live_instances(self.moto_url, owner)[name]
        return {t["Key"]: t["Value"] for t in instance.get("Tags", [])}

    def live(self) -> dict[str, list[str]]:
        """Ids of every machine each cloud holds and is not deleting, by cloud."""
        return {"hetzner": self.hetzner.live(), "ec2": self.ec2.live()}
