"""The one builder of ``MachineSpec`` for tests and benchmarks, with each cloud's typical
machine type and location as defaults."""

from __future__ import annotations

from functools import partial

from machines.runtime.models import MachineSpec

OWNER = "prod"
"""The owner of the providers the fixtures build."""

TYPICAL = {"hetzner": ("cx23", "fsn1"), "ec2": ("t3.micro", "eu-central-1a")}
"""Per cloud, a cheap amd64 machine type and a location that offers it."""


def spec(
    name: str = "ci-1",
    *,
    cloud: str = "hetzner",
    machine_type: str | None = None,
    location: str | None = None,
    pool: str = "ci",
    user_data: str = "",
) -> MachineSpec:
    """A machine of ``pool`` on ``cloud``, of its typical type and location unless told."""
    typical_type, typical_location = TYPICAL[cloud]
    return MachineSpec(
        name=name,
        machine_type=typical_type if machine_type is None else machine_type,
        location=typical_location if location is None else location,
        pool=pool,
        user_data=user_data,
    )


ec2_spec = partial(spec, cloud="ec2")
"""``spec`` on EC2."""


def hetzner_pool(hetzner: dict[str, object], name: str = "x86") -> dict[str, object]:
    """A stack file's pool of one cx23 in fsn1 (at most 4 machines) with these Hetzner
    options (``hetzner.network``, ``imageSelector``, ...): the engine tests' usual pool."""
    return {
        "name": name,
        "machineType": "cx23",
        "location": "fsn1",
        "size": 1,
        "max": 4,
        "hetzner": hetzner,
    }
