"""An EC2 deployment's settings: a subnet per location, a security group, a profile."""

from __future__ import annotations

import json
from typing import Annotated, ClassVar, Literal

from pydantic import BaseModel, Field, Tag, field_validator, model_validator

from machines.program.config.models import (
    BaseDeployment,
    ExistingName,
    Model,
    Name,
    PoolConfig,
    either,
    owned_name,
)
from machines.program.config.ports import check_rule_port, port_as_text
from machines.runtime.clouds.ec2.events import names_problem
from machines.runtime.clouds.ec2.options import Ec2Options, Metadata, RootVolume
from machines.runtime.clouds.ec2.settings import (
    AWS_ACCESS_KEY_ID,
    AWS_ENDPOINT_URL,
    AWS_REGION,
    AWS_SECRET_ACCESS_KEY,
    AWS_SESSION_TOKEN,
    NAME_TAG,
    ORCA_EC2_EVENTS_QUEUE,
    ORCA_EC2_IMAGE,
    ORCA_EC2_INSTANCE_PROFILE,
    ORCA_EC2_SECURITY_GROUP,
    ORCA_EC2_SUBNETS,
    ec2_env,
    region_refusal,
)
from machines.runtime.models import Market
from machines.runtime.settings import check_url

AWS_REGION_KEY = "aws:region"
AWS_ENDPOINTS_KEY = "aws:endpoints"
UNMADE_GROUP = "sg-00000000000000000"
"""Stands for the id of a security group the stack creates, where only the catalogue is read."""


class IngressRule(Model):
    """An inbound rule of an EC2 security group the stack creates."""

    protocol: Literal["tcp", "udp", "icmp", "icmpv6", "all"]
    port: str = ""
    source_ips: tuple[Name, ...] = Field(min_length=1)
    description: str = ""

    _port = field_validator("port", mode="before")(port_as_text)

    @model_validator(mode="after")
    def _consistent(self) -> IngressRule:
        check_rule_port(self.protocol, self.port, allow_any=False, example="'22' or '8000-9000'")
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


class SecurityGroup(Model):
    """An EC2 security group the stack creates in ``vpc``, named ``<owner>-<name>``.

    It lets in what ``ingress`` says and lets everything out.
    """

    name: str
    vpc: Name
    ingress: tuple[IngressRule, ...] = ()

    _name = field_validator("name")(owned_name)


class InstanceProfile(Model):
    """An IAM role for EC2 and its instance profile, both named ``<owner>-<name>``."""

    name: str
    policies: tuple[Name, ...] = ()
    """ARNs of managed policies attached to the role."""

    _name = field_validator("name")(owned_name)

    @field_validator("policies")
    @classmethod
    def _distinct(cls, policies: tuple[str, ...]) -> tuple[str, ...]:
        twice = sorted({p for p in policies if policies.count(p) > 1})
        if twice:
            raise ValueError(f"names {', '.join(twice)} more than once")
        return policies


SecurityGroupItem = Annotated[
    ExistingName | Annotated[SecurityGroup, Tag("<new>")], either("security group")
]
InstanceProfileItem = Annotated[
    ExistingName | Annotated[InstanceProfile, Tag("<new>")], either("instance profile")
]


class Ec2Deployment(BaseDeployment):
    """A deployment on EC2: instances in a subnet per location, a security group, a profile."""

    provider_keys: ClassVar[tuple[str, ...]] = (AWS_REGION_KEY, AWS_ENDPOINTS_KEY)
    missing_hints: ClassVar[dict[str, str]] = {AWS_REGION_KEY: "name the stack's region"}
    provider_namespace: ClassVar[str] = "aws"
    provider_config: ClassVar[frozenset[str]] = frozenset(
        {
            "accessKey",
            "allowedAccountIds",
            "assumeRole",
            "assumeRoleWithWebIdentity",
            "customCaBundle",
            "defaultTags",
            "ec2MetadataServiceEndpoint",
            "ec2MetadataServiceEndpointMode",
            "endpoints",
            "forbiddenAccountIds",
            "httpProxy",
            "httpsProxy",
            "ignoreTags",
            "insecure",
            "maxRetries",
            "noProxy",
            "profile",
            "region",
            "retryMode",
            "s3UsEast1RegionalEndpoint",
            "s3UsePathStyle",
            "secretKey",
            "sharedConfigFiles",
            "sharedCredentialsFiles",
            "skipCredentialsValidation",
            "skipMetadataApiCheck",
            "skipRegionValidation",
            "skipRequestingAccountId",
            "stsRegion",
            "token",
            "tokenBucketRateLimiterCapacity",
            "useDualstackEndpoint",
            "useFipsEndpoint",
        }
    )
    models: ClassVar[tuple[type[BaseModel], ...]] = (
        SecurityGroup,
        IngressRule,
        InstanceProfile,
        Ec2Options,
        RootVolume,
        Metadata,
    )
    credentials: ClassVar[dict[str, str]] = {
        "aws:accessKey": AWS_ACCESS_KEY_ID,
        "aws:secretKey": AWS_SECRET_ACCESS_KEY,
        "aws:token": AWS_SESSION_TOKEN,
    }
    setting_keys: ClassVar[dict[str, str]] = {
        AWS_REGION: AWS_REGION_KEY,
        AWS_ENDPOINT_URL: AWS_ENDPOINTS_KEY,
        ORCA_EC2_SUBNETS: "subnets",
        ORCA_EC2_SECURITY_GROUP: "securityGroup",
        ORCA_EC2_INSTANCE_PROFILE: "instanceProfile",
        ORCA_EC2_IMAGE: "image",
        ORCA_EC2_EVENTS_QUEUE: "",  # the queue the stack makes for its spot pools: no key
    }
    plugin: ClassVar[str] = "aws"
    machine_resource: ClassVar[str] = "aws:ec2/instance:Instance"
    machine_labels: ClassVar[str] = "tags"
    machine_type_key: ClassVar[str] = "instanceType"
    machine_name_label: ClassVar[str] = NAME_TAG

    provider: Literal["ec2"]
    region: Name = Field(alias=AWS_REGION_KEY)
    subnets: dict[Name, Name] = Field(min_length=1)
    security_group: SecurityGroupItem
    instance_profile: InstanceProfileItem
    image: str = ""
    endpoints: tuple[dict[str, str], ...] = Field(default=(), alias=AWS_ENDPOINTS_KEY)
    """The aws provider's custom endpoints; the runtime gets the ``ec2`` one."""

    @field_validator("region")
    @classmethod
    def _region(cls, region: str) -> str:
        refused = region_refusal(region)
        if refused:
            raise ValueError(refused)
        return region

    @field_validator("endpoints", mode="before")
    @classmethod
    def _endpoints(cls, value: object) -> object:
        return json.loads(value) if isinstance(value, str) and value[:1] == "[" else value

    @field_validator("endpoints")
    @classmethod
    def _ec2_endpoint(cls, endpoints: tuple[dict[str, str], ...]) -> tuple[dict[str, str], ...]:
        """The ``ec2`` endpoint, which the runtime gets too, held to its rule: an http(s) URL."""
        for endpoint in endpoints:
            if endpoint.get("ec2"):
                check_url(endpoint["ec2"], "http://127.0.0.1:5000")
        return endpoints

    def ec2_endpoint(self) -> str:
        """The EC2 endpoint of ``aws:endpoints``, or empty for AWS's own."""
        return next((e["ec2"] for e in self.endpoints if e.get("ec2")), "")

    def instance_profile_name(self) -> str:
        """The instance profile's name, existing or created."""
        if isinstance(self.instance_profile, str):
            return self.instance_profile
        return self.owned(self.instance_profile.name)

    def env(self, security_group_id: str = "", *, events_queue: str = "") -> dict[str, str]:
        """The runtime's settings (``settings.ec2_env``); a created group's id and the
        queue of EC2's notices (where pools buy spot) are passed in."""
        if isinstance(self.security_group, str):
            security_group_id = self.security_group
        return ec2_env(
            self.region,
            self.subnets,
            security_group_id,
            self.instance_profile_name(),
            self.image,
            endpoint_url=self.ec2_endpoint(),
            events_queue=events_queue,
        )

    def catalogue_env(self) -> dict[str, str]:
        """A group the stack creates has no id before ``up``; the catalogue needs none."""
        return self.env(security_group_id=UNMADE_GROUP)

    def place_problems(self, pool: PoolConfig) -> list[tuple[str, str]]:
        found = super().place_problems(pool)
        unnamed = names_problem(self.owner) if pool.market != Market.ON_DEMAND else ""
        if unnamed:
            found.append(("market", unnamed))
        if pool.location not in self.subnets:
            found.append(
                (
                    "location",
                    f"no subnet for {pool.location!r}: subnets maps "
                    f"{', '.join(sorted(self.subnets))}; add {pool.location}: subnet-...",
                )
            )
        return found


DEPLOYMENT = Ec2Deployment
