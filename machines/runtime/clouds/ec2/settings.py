"""Settings of the EC2 provider, from environment variables and back."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping

from pydantic import BaseModel, ConfigDict

from machines.runtime.arch import AMD64, ARM64, docker_arch
from machines.runtime.errors import SettingsError
from machines.runtime.models import Market
from machines.runtime.settings import Freshness, Timeouts, mapping, required, single, url

AWS_REGION = "AWS_REGION"
AWS_DEFAULT_REGION = "AWS_DEFAULT_REGION"
AWS_ENDPOINT_URL = "AWS_ENDPOINT_URL"
AWS_ACCESS_KEY_ID = "AWS_ACCESS_KEY_ID"
AWS_SECRET_ACCESS_KEY = "AWS_SECRET_ACCESS_KEY"  # noqa: S105 (the variable's name)
AWS_SESSION_TOKEN = "AWS_SESSION_TOKEN"  # noqa: S105 (the variable's name)
AWS_PROFILE = "AWS_PROFILE"
ORCA_EC2_SUBNETS = "ORCA_EC2_SUBNETS"
ORCA_EC2_SECURITY_GROUP = "ORCA_EC2_SECURITY_GROUP"
ORCA_EC2_INSTANCE_PROFILE = "ORCA_EC2_INSTANCE_PROFILE"
ORCA_EC2_IMAGE = "ORCA_EC2_IMAGE"
ORCA_EC2_EVENTS_QUEUE = "ORCA_EC2_EVENTS_QUEUE"
"""The URL of the SQS queue EventBridge puts EC2's notices in (spot interruption warnings,
rebalance recommendations, instance state changes, AWS Health scheduled changes): a stack
with spot pools makes it and exports its URL; the listing reads it (``clouds.ec2.notices``)."""
QUEUE_URL_EXAMPLE = "https://sqs.eu-central-1.amazonaws.com/123456789012/prod-machine-events"
SETTINGS = (
    AWS_REGION,
    AWS_ENDPOINT_URL,
    ORCA_EC2_SUBNETS,
    ORCA_EC2_SECURITY_GROUP,
    ORCA_EC2_INSTANCE_PROFILE,
    ORCA_EC2_IMAGE,
    ORCA_EC2_EVENTS_QUEUE,
)
"""The variables ``ec2_env`` writes: what a stack's settings say of EC2 (``Cloud.settings``)."""

CLOUD = "EC2"

_ARCHS = {AMD64: "x86_64", ARM64: "arm64"}

UBUNTU_OWNER = "099720109477"
"""Canonical's AWS account, the publisher of the official Ubuntu images."""


def ec2_arch(arch: str) -> str:
    """EC2's name (``x86_64``/``arm64``) for a Docker architecture name."""
    return _ARCHS.get(docker_arch(arch), arch)


def ubuntu_ami_name(arch: str) -> str:
    """Name pattern of Canonical's Ubuntu 24.04 LTS server images for an architecture."""
    return f"ubuntu/images/hvm-ssd-gp3/ubuntu-noble-24.04-{docker_arch(arch)}-server-*"


NO_STOCK_CODES = frozenset(
    {"InsufficientInstanceCapacity", "InsufficientHostCapacity", "Unsupported"}
)
"""RunInstances errors that mean no capacity for the type in that zone now, not a mistake
(here, beside the settings, so automation reads a failed engine run by them without boto3)."""
ACCOUNT_LIMIT_CODES = frozenset({"VcpuLimitExceeded", "InstanceLimitExceeded"})
"""RunInstances errors that mean the account is at its on-demand quota in the region
(vCPUs per instance family bucket; the older instance-count limits): no on-demand launch
is made in any zone of the region until instances go or the quota is raised. (The spot
quota, ``MaxSpotInstanceCountExceeded``, is answered as no spot capacity.)"""
ACCOUNT_LIMIT_HELP = (
    "terminate instances the account no longer needs, or request a higher quota in Service "
    "Quotas (Amazon EC2, 'Running On-Demand ... instances', in vCPUs per instance family "
    "and region)"
)
"""How an account at its quota gets room again, for the answer that says it is."""
NAME_TAG = "Name"
"""EC2's name of an instance, a tag: the runtime's and the stack's machines carry it."""
MARKETS = frozenset(Market)
"""EC2 sells on-demand and spot capacity: every market."""

SPOT_INSTANCE_TYPE = "one-time"
SPOT_INTERRUPTION_BEHAVIOR = "terminate"
"""A pool's spot machine, the runtime's and the stack's alike: a one-time spot request that
terminates the instance on interruption, so no persistent request relaunches it behind the
autoscaler's back and no stopped instance is left to bill its volumes."""


_REGION = re.compile(r"[a-z]{2}(-[a-z0-9]+)+-[0-9]+")


def region_refusal(value: str) -> str:
    """Why ``value`` is no AWS region name (such as eu-central-1); empty when it is one."""
    if _REGION.fullmatch(value):
        return ""
    return f"{value!r} is not an AWS region name: write it like eu-central-1"


def region(env: Mapping[str, str], name: str) -> str:
    """An AWS region name such as eu-central-1, or empty when unset."""
    value = single(env, name)
    refused = region_refusal(value) if value else ""
    if refused:
        raise SettingsError(f"{name}={refused}")
    return value


class Ec2Settings(BaseModel):
    """Settings of the EC2 provider. Credentials come from boto3's default chain."""

    model_config = ConfigDict(frozen=True)

    region: str
    endpoint_url: str = ""
    subnets: dict[str, str]
    security_group: str
    instance_profile: str
    image: str = ""
    events_queue: str = ""
    timeouts: Timeouts = Timeouts()
    freshness: Freshness = Freshness()

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Ec2Settings:
        env = os.environ if environ is None else environ
        for credential in (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN):
            single(env, credential, secret=True)
        single(env, AWS_PROFILE)
        region_name = region(env, AWS_REGION) or region(env, AWS_DEFAULT_REGION)
        if not region_name:
            raise SettingsError(
                f"{AWS_REGION} is not set: name the EC2 region, e.g. {AWS_REGION}=eu-central-1"
            )
        return cls(
            region=region_name,
            endpoint_url=url(env, AWS_ENDPOINT_URL, "http://127.0.0.1:5000"),
            subnets=mapping(env, ORCA_EC2_SUBNETS, "eu-central-1a=subnet-0abc"),
            security_group=required(env, ORCA_EC2_SECURITY_GROUP),
            instance_profile=required(env, ORCA_EC2_INSTANCE_PROFILE),
            image=single(env, ORCA_EC2_IMAGE),
            events_queue=url(env, ORCA_EC2_EVENTS_QUEUE, QUEUE_URL_EXAMPLE),
            timeouts=Timeouts.from_env(env),
            freshness=Freshness.from_env(env),
        )

    def env(self) -> dict[str, str]:
        """The variables that reproduce these settings (credentials are left out)."""
        return ec2_env(
            self.region,
            self.subnets,
            self.security_group,
            self.instance_profile,
            self.image,
            endpoint_url=self.endpoint_url,
            events_queue=self.events_queue,
        )


def ec2_env(
    region: str,
    subnets: Mapping[str, str],
    security_group: str,
    instance_profile: str,
    image: str = "",
    *,
    endpoint_url: str = "",
    events_queue: str = "",
) -> dict[str, str]:
    """Variables for an EC2 deployment."""
    env = {
        AWS_REGION: region,
        AWS_ENDPOINT_URL: endpoint_url,
        ORCA_EC2_SUBNETS: ",".join(f"{zone}={subnet}" for zone, subnet in subnets.items()),
        ORCA_EC2_SECURITY_GROUP: security_group,
        ORCA_EC2_INSTANCE_PROFILE: instance_profile,
        ORCA_EC2_IMAGE: image,
        ORCA_EC2_EVENTS_QUEUE: events_queue,
    }
    return {k: v for k, v in env.items() if v}
