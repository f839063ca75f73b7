"""Requests per ``create`` with each pool option, on both clouds, and per ``pulumi up`` of a
Hetzner pool with a network and a placement group against one without.

Hetzner counts come from the emulator's request counter, EC2's from the provider's boto3
client (botocore's ``before-call``, one per request), so they are what went over the wire.
Each option's row is a fresh provider: its first create (names resolved) and its next one.

    python -m bench.pool_options [--servers 5]
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import tempfile
from collections import Counter
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import yaml
from hcloud.networks import NetworkSubnet
from hcloud.placement_groups import PlacementGroup

from emulator.process import Emulator, running_emulator
from machines import Provider, automation
from testkit import hetzner
from testkit.moto_server import CANONICAL, OLD_AMD64, build_world, count_calls, running
from testkit.specs import ec2_spec, spec

OWNER = "bench"

HETZNER_OPTIONS: dict[str, dict[str, Any]] = {
    "defaults": {},
    "ipv4: false": {"ipv4": False},
    "network": {"network": "ci"},
    "ipv4 and ipv6 false, network": {"ipv4": False, "ipv6": False, "network": "ci"},
    "placementGroup": {"placementGroup": "spread"},
    "image by id": {"image": "IMAGE"},
    "imageSelector": {"imageSelector": "role=ci-worker"},
    "labels": {"labels": {"team": "ci"}},
}

EC2_OPTIONS: dict[str, dict[str, Any]] = {
    "defaults (root volume, IMDSv2, terminate)": {},
    "rootVolume 100 GiB gp3, 4000 IOPS, 250 MiB/s": {
        "rootVolume": {"size": 100, "iops": 4000, "throughput": 250}
    },
    "metadata hopLimit 2": {"metadata": {"hopLimit": 2}},
    "image by id": {"image": OLD_AMD64},
    "imageOwner + imageName": {
        "imageOwner": CANONICAL,
        "imageName": "ubuntu/images/hvm-ssd-gp3/ubuntu-noble-24.04-*",
    },
    "tags": {"tags": {"team": "ci"}},
}


def pools(cloud: str, options: Mapping[str, Any]) -> str:
    return json.dumps([{"name": "ci", "max": 10, cloud: dict(options)}])


def hetzner_rows(emulator: Emulator) -> list[tuple[str, int, int, str]]:
    hcloud = hetzner.client(emulator, os.environ["HCLOUD_TOKEN"])
    rows = []
    for label, options in HETZNER_OPTIONS.items():
        emulator.control.reset()
        hcloud.networks.create(
            name="ci",
            ip_range="10.0.0.0/16",
            subnets=[
                NetworkSubnet(ip_range="10.0.1.0/24", network_zone="eu-central", type="cloud")
            ],
        )
        hcloud.placement_groups.create(name="spread", type=PlacementGroup.TYPE_SPREAD)
        image = emulator.control.add_image(labels={"role": "ci-worker"})
        chosen = {"image": str(image)} if options.get("image") == "IMAGE" else options
        os.environ["ORCA_POOLS"] = pools("hetzner", chosen)
        provider = Provider.of("hetzner", OWNER)
        counts = []
        for name in ("ci-1", "ci-2"):
            emulator.control.reset_requests()
            created = provider.create(spec(name))
            if created.machine is None:
                raise SystemExit(f"{label}: {created.reason}")
            counts.append(emulator.control.requests())
        routes = ", ".join(f"{r} x{n}" for r, n in sorted(counts[0].routes.items()))
        rows.append((label, counts[0].total, counts[1].total, routes))
    return rows


def ec2_rows(environ: Mapping[str, str]) -> list[tuple[str, int, int, str]]:
    rows = []
    for n, (label, options) in enumerate(EC2_OPTIONS.items()):
        env = {**environ, "ORCA_POOLS": pools("ec2", options)}
        provider = Provider.of("ec2", f"{OWNER}{n}", env)
        calls: Counter[str] = count_calls(provider._client)  # type: ignore[attr-defined]
        counts = []
        for name in (f"ci-{n}-1", f"ci-{n}-2"):
            before = Counter(calls)
            created = provider.create(ec2_spec(name))
            if created.machine is None:
                raise SystemExit(f"{label}: {created.reason}")
            counts.append(calls - before)
        detail = ", ".join(f"{k} {v}" for k, v in sorted(counts[0].items()))
        rows.append((label, sum(counts[0].values()), sum(counts[1].values()), detail))
    return rows


def stack_file(servers: int, endpoint: str, spread: bool) -> str:
    pool: dict[str, Any] = {"name": "ci", "machineType": "cx23", "location": "fsn1"}
    config: dict[str, Any] = {"hcloud:endpoint": endpoint, "orca-machines:provider": "hetzner"}
    if spread:
        config["orca-machines:networks"] = [{"name": "ci"}]
        config["orca-machines:placementGroups"] = [{"name": "spread"}]
        pool |= {"max": 10, "hetzner": {"ipv4": False, "network": "ci", "placementGroup": "spread"}}
    config["orca-machines:pools"] = [{**pool, "size": servers}]
    return yaml.safe_dump({"config": config}, sort_keys=False)


def up_rows(emulator: Emulator, servers: int) -> list[tuple[str, int, str]]:
    quiet: automation.OnOutput = lambda _line: None  # noqa: E731
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-options-") as tmp:
        root = Path(tmp)
        project = automation.copy_project(root / "project")
        (root / "state").mkdir()
        os.environ.pop("ORCA_POOLS", None)
        os.environ.update(
            {
                automation.ORCA_PULUMI_PROJECT: str(project),
                automation.PULUMI_BACKEND_URL: (root / "state").as_uri(),
                automation.PULUMI_CONFIG_PASSPHRASE: "orca-machines-bench",
            }
        )
        for spread in (False, True):
            emulator.control.reset()
            stack = "spread" if spread else "plain"
            (project / "stacks" / f"Pulumi.{stack}.yaml").write_text(
                stack_file(servers, emulator.url, spread)
            )
            steps: list[tuple[str, Callable[[], object]]] = [
                ("up", functools.partial(automation.up, stack, on_output=quiet)),
                ("destroy", functools.partial(automation.destroy, stack, on_output=quiet)),
            ]
            for step, action in steps:
                emulator.control.reset_requests()
                action()
                counts = emulator.control.requests()
                busiest = sorted(counts.routes.items(), key=lambda item: -item[1])[:4]
                label = f"{step} of {servers} servers" + (
                    ", IPv6 only, network + placement group" if spread else ""
                )
                rows.append((label, counts.total, ", ".join(f"{r} x{n}" for r, n in busiest)))
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--servers", type=int, default=5)
    args = parser.parse_args()
    token = hetzner.token("options")
    with running_emulator(token, "--quiet", "--boot-seconds", "0", "--action-seconds", "0") as emu:
        os.environ.update({"HCLOUD_TOKEN": token, "HCLOUD_ENDPOINT": emu.url})
        print("Hetzner: requests per create with each option")
        print("| option | first create | next create | first create's routes |")
        print("|---|---:|---:|---|")
        for label, first, then, routes in hetzner_rows(emu):
            print(f"| {label} | {first} | {then} | {routes} |")
        print()
        print("Hetzner: pulumi up with the official plugin")
        print("| step | requests | busiest routes |")
        print("|---|---:|---|")
        for label, total, busiest in up_rows(emu, args.servers):
            print(f"| {label} | {total} | {busiest} |")
    with tempfile.TemporaryDirectory() as workdir, running(Path(workdir)) as server:
        world = build_world(server.url)
        print()
        print("EC2: requests per create with each option")
        print("| option | first create | next create | first create's calls |")
        print("|---|---:|---:|---|")
        for label, first, then, detail in ec2_rows(world.env):
            print(f"| {label} | {first} | {then} | {detail} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
