"""moto's server mode as a separate process on loopback, for the EC2 tests and the benchmarks.

``running()`` starts it (``moto_spot.py``: moto's server, one request at a time, that can
interrupt a spot instance) with Canonical's Ubuntu images (two dates per architecture, so
"newest" means something), ``build_world()`` makes the VPC, subnets, security group and
instance profile a provider needs and returns the environment that points one at them,
``export_world()`` points this process's environment at a world, away from the developer's
shell.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from collections import Counter
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

import boto3

from machines.runtime.clouds.ec2.provider import Ec2Provider
from machines.runtime.provider import Provider

if TYPE_CHECKING:
    import pytest

REGION = "eu-central-1"
ZONES = ("eu-central-1a", "eu-central-1b")
CANONICAL = "099720109477"
PROFILE = "orca-workers"

OLD_AMD64 = "ami-0a0a0a0a0a0a00001"
NEW_AMD64 = "ami-0a0a0a0a0a0a00002"
OLD_ARM64 = "ami-0b0b0b0b0b0b00001"
NEW_ARM64 = "ami-0b0b0b0b0b0b00002"

CREDENTIALS = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_SESSION_TOKEN": "testing",
}

ISOLATED = (
    "AWS_DEFAULT_REGION",
    "AWS_PROFILE",
    "AWS_ENDPOINT_URL_EC2",
    "AWS_RETRY_MODE",
    "AWS_MAX_ATTEMPTS",
    "ORCA_EC2_IMAGE",
    "ORCA_REQUEST_TIMEOUT",
    "ORCA_CALL_TIMEOUT",
    "ORCA_LIST_TTL",
    "ORCA_LIST_SHARE",
    "ORCA_LIST_MAX_AGE",
    "ORCA_BUDGET_RESERVE",
    "ORCA_OFFERS_TTL",
    "ORCA_NO_STOCK_TTL",
    "ORCA_EC2_EVENTS_QUEUE",
    "ORCA_POOLS",
    "ORCA_POOL_MAX",
    "ORCA_POOL_MARKET",
)
"""Variables of the developer's shell that would change what a test sees."""


def _ubuntu(ami_id: str, arch: str, day: str) -> dict[str, Any]:
    """One image as moto's amis.json describes it (see moto/ec2/resources/amis.json.gz)."""
    name = f"ubuntu/images/hvm-ssd-gp3/ubuntu-noble-24.04-{arch}-server-{day}"
    return {
        "ami_id": ami_id,
        "state": "available",
        "public": True,
        "owner_id": CANONICAL,
        "image_location": f"amazon/{name}",
        "sriov": "simple",
        "root_device_type": "ebs",
        "root_device_name": "/dev/sda1",
        "description": f"Canonical, Ubuntu, 24.04, {arch} noble image",
        "image_type": "machine",
        "platform": None,
        "architecture": "x86_64" if arch == "amd64" else "arm64",
        "name": name,
        "virtualization_type": "hvm",
        "hypervisor": "xen",
        "creation_date": f"{day[:4]}-{day[4:6]}-{day[6:]}T08:00:00.000Z",
    }


IMAGES = [
    _ubuntu(NEW_AMD64, "amd64", "20250610"),
    _ubuntu(OLD_AMD64, "amd64", "20240423"),
    _ubuntu(OLD_ARM64, "arm64", "20240423"),
    _ubuntu(NEW_ARM64, "arm64", "20250610"),
]


MOTO_SPOT = Path(__file__).with_name("moto_spot.py")
"""moto's server, plus the spot interruption moto does not model (``interrupt``)."""


@dataclass(frozen=True)
class MotoServer:
    """A running moto server: its base URL and process."""

    url: str
    process: subprocess.Popen[bytes]

    def reset(self) -> None:
        """Forget every resource, as if the server had just started."""
        request = urllib.request.Request(f"{self.url}/moto-api/reset", method="POST")
        with urllib.request.urlopen(request, timeout=10):
            pass

    def interrupt(self, instance_id: str) -> None:
        """EC2 takes the spot instance back: it terminates, its state reason
        ``Server.SpotInstanceTermination`` (moto's own API cannot do this)."""
        body = urllib.parse.urlencode({"InstanceId": instance_id, "Region": REGION}).encode()
        request = urllib.request.Request(
            f"{self.url}/orca-test/spot-interruption", data=body, method="POST"
        )
        with urllib.request.urlopen(request, timeout=10):
            pass

    def new_world(self) -> World:
        """Forget every resource, then build a world: a fresh account a provider can use."""
        self.reset()
        return build_world(self.url)


def free_port() -> int:
    """A TCP port on loopback nobody listens on right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


START_TIMEOUT = 600.0
"""Seconds moto's server may take to answer its first request, a bound on a server that hangs
only: the wait ends when it answers or exits. Importing moto's backends takes seconds, and
over 30 s on a loaded 2-core machine with another test run beside it, which failed every
test of a session whose server was still starting."""


@contextmanager
def running(workdir: Path, timeout: float = START_TIMEOUT) -> Iterator[MotoServer]:
    """Start ``python -m moto.server`` on a free loopback port and stop it afterwards."""
    amis = workdir / "amis.json"
    amis.write_text(json.dumps(IMAGES))
    env = {
        **os.environ,
        "MOTO_AMIS_PATH": str(amis),
        "MOTO_ENABLE_AMI_VALIDATION": "true",
        "MOTO_EC2_ENABLE_INSTANCE_TYPE_VALIDATION": "true",
    }
    port = free_port()
    log = (workdir / "moto.log").open("wb")
    process = subprocess.Popen(
        [sys.executable, str(MOTO_SPOT), "-H", "127.0.0.1", "-p", str(port)],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    server = MotoServer(f"http://127.0.0.1:{port}", process)
    try:
        wait_until_up(server, timeout, workdir / "moto.log")
        yield server
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()


def wait_until_up(server: MotoServer, timeout: float, log: Path) -> None:
    """Return once ``server`` answers; its ``log`` in the error if it exits or hangs."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            raise RuntimeError(f"moto's server exited early:\n{log.read_text()}")
        try:
            with urllib.request.urlopen(f"{server.url}/moto-api/", timeout=1):
                return
        except urllib.error.HTTPError:
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"moto's server did not answer within {timeout} s:\n{log.read_text()}")


@cache
def client(url: str, service: str = "ec2") -> Any:
    """A boto3 client of the emulator, for setting up and inspecting from outside the provider.

    Cached: making a client costs a tenth of a second, a call to moto a few milliseconds.
    """
    return boto3.session.Session(region_name=REGION).client(
        service,
        region_name=REGION,
        endpoint_url=url,
        aws_access_key_id=CREDENTIALS["AWS_ACCESS_KEY_ID"],
        aws_secret_access_key=CREDENTIALS["AWS_SECRET_ACCESS_KEY"],
    )


@dataclass(frozen=True)
class World:
    """What a provider needs in the account, and the environment naming it."""

    vpc: str
    subnets: dict[str, str]
    security_group: str
    profile_arn: str
    env: dict[str, str]


@dataclass(frozen=True)
class Network:
    """A VPC and a subnet in each of the region's two zones: what an account already has."""

    vpc: str
    subnets: dict[str, str]


def build_network(url: str) -> Network:
    """A VPC with a subnet in each of two zones."""
    ec2 = client(url)
    vpc = ec2.create_vpc(CidrBlock="10.0.0.0/16")["Vpc"]["VpcId"]
    subnets = {}
    for index, zone in enumerate(ZONES, start=1):
        cidr = f"10.0.{index}.0/24"
        made = ec2.create_subnet(VpcId=vpc, CidrBlock=cidr, AvailabilityZone=zone)
        subnets[zone] = made["Subnet"]["SubnetId"]
    return Network(vpc, subnets)


def managed_policy(url: str, name: str = "orca-workers") -> str:
    """A customer-managed IAM policy to attach to roles; its ARN.

    moto loads AWS's own managed policies only when asked to (slowly), so stacks under test
    attach one of these instead.
    """
    document = {
        "Version": "2012-10-17",
        "Statement": [{"Effect": "Allow", "Action": "ec2:DescribeTags", "Resource": "*"}],
    }
    made = client(url, "iam").create_policy(PolicyName=name, PolicyDocument=json.dumps(document))
    arn: str = made["Policy"]["Arn"]
    return arn


def build_world(url: str) -> World:
    """A VPC with a subnet in each of two zones, a security group and an instance profile."""
    ec2 = client(url)
    iam = client(url, "iam")
    network = build_network(url)
    vpc, subnets = network.vpc, network.subnets
    group = ec2.create_security_group(
        GroupName="orca-workers", Description="orca workers", VpcId=vpc
    )["GroupId"]
    profile = iam.create_instance_profile(InstanceProfileName=PROFILE)["InstanceProfile"]["Arn"]
    env = {
        **CREDENTIALS,
        "AWS_REGION": REGION,
        "AWS_ENDPOINT_URL": url,
        "ORCA_EC2_SUBNETS": ",".join(f"{zone}={subnet}" for zone, subnet in subnets.items()),
        "ORCA_EC2_SECURITY_GROUP": group,
        "ORCA_EC2_INSTANCE_PROFILE": PROFILE,
    }
    return World(vpc, subnets, group, profile, env)


def isolate(monkeypatch: pytest.MonkeyPatch) -> None:
    """Keep the developer's shell and AWS files from changing what this process's AWS
    clients see."""
    for name in ISOLATED:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", os.devnull)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", os.devnull)


def export_world(world: World, monkeypatch: pytest.MonkeyPatch) -> World:
    """Point this process's environment at ``world``, and only at it (see ``isolate``)."""
    isolate(monkeypatch)
    for name, value in world.env.items():
        monkeypatch.setenv(name, value)
    return world


def ec2_provider(owner: str, environ: Mapping[str, str] | None = None) -> Ec2Provider:
    """The provider the autoscaler builds, ``Provider.of("ec2", owner, environ)``."""
    made = Provider.of("ec2", owner, environ)
    assert isinstance(made, Ec2Provider)
    return made


def launch_tagged(ec2_client: Any, name: str, tags: dict[str, str]) -> str:
    """An instance made outside the provider, with exactly these tags and a Name."""
    tag_list = [{"Key": k, "Value": v} for k, v in {"Name": name, **tags}.items()]
    reply = ec2_client.run_instances(
        ImageId=OLD_AMD64,
        InstanceType="t3.micro",
        MinCount=1,
        MaxCount=1,
        TagSpecifications=[{"ResourceType": "instance", "Tags": tag_list}],
    )
    instance_id: str = reply["Instances"][0]["InstanceId"]
    return instance_id


def count_calls(aws_client: Any) -> Counter[str]:
    """A counter of the client's API calls from now on, per operation (pages count apiece);
    the client of any service (EC2's, SQS's)."""
    calls: Counter[str] = Counter()

    def count(model: Any, **_: Any) -> None:
        calls[model.name] += 1

    service = aws_client.meta.service_model.service_id.hyphenize()
    aws_client.meta.events.register(f"before-call.{service}", count)
    return calls


def deny(aws_client: Any, operation: str, code: str = "AccessDeniedException") -> None:
    """Make the client's ``operation`` answer ``code`` (HTTP 400) without asking moto, as AWS
    answers a caller whose policy does not allow it (moto's server allows everything)."""
    service = aws_client.meta.service_model.service_name

    def refuse(**_: Any) -> tuple[Any, dict[str, Any]]:
        answer = {"Error": {"Code": code, "Message": f"not allowed: {operation}"}}
        return SimpleNamespace(status_code=400, headers={}), answer

    aws_client.meta.events.register(f"before-call.{service}.{operation}", refuse)


def sent_params(ec2_client: Any, operation: str) -> list[dict[str, Any]]:
    """The parameters of each ``operation`` call (``RunInstances``) the client makes from now
    on, as the caller gave them to boto3."""
    seen: list[dict[str, Any]] = []

    def keep(params: dict[str, Any], **_: Any) -> None:
        seen.append(dict(params))

    ec2_client.meta.events.register(f"before-parameter-build.ec2.{operation}", keep)
    return seen


def live_instances(url: str, owner: str) -> dict[str, dict[str, Any]]:
    """The instances of ``owner`` that are not terminated, by Name tag, straight from moto."""
    found = {}
    filters = [{"Name": "tag:orca-owner", "Values": [owner]}]
    for reservation in client(url).describe_instances(Filters=filters)["Reservations"]:
        for instance in reservation["Instances"]:
            if instance["State"]["Name"] != "terminated":
                tags = {t["Key"]: t["Value"] for t in instance.get("Tags", [])}
                found[tags["Name"]] = instance
    return found
