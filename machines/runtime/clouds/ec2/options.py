"""A pool's EC2 options (root volume, metadata service, image, tags) and their rules.

Light on purpose: the pool model, the stack file's check and the EC2 provider all read it,
so it imports neither boto3 nor anything of the provider.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Literal

from pydantic import Field, field_validator, model_validator

from machines.runtime.labels import numbers_as_text
from machines.runtime.options import Model, Options, extra_keys

KIND = "ec2"

DEFAULT_VOLUME_SIZE = 30
"""GiB of a pool machine's root volume by default (Ubuntu's AMI has 8, which a Docker build
fills in minutes; terraform-aws-github-runner's runners have 30)."""


@dataclass(frozen=True)
class VolumeLimits:
    """What EC2 takes of one EBS volume type: sizes (GiB), provisioned IOPS (none: the type
    has none), IOPS per GiB, and whether it may be an instance's root (boot) volume."""

    sizes: tuple[int, int]
    iops: tuple[int, int] | None = None
    iops_per_gib: int = 0
    bootable: bool = True


VOLUME_LIMITS: dict[str, VolumeLimits] = {
    "gp3": VolumeLimits((1, 16_384), (3_000, 16_000), 500),
    "gp2": VolumeLimits((1, 16_384)),
    "io1": VolumeLimits((4, 16_384), (100, 64_000), 50),
    "io2": VolumeLimits((4, 65_536), (100, 256_000), 500),
    "st1": VolumeLimits((125, 16_384), bootable=False),
    "sc1": VolumeLimits((125, 16_384), bootable=False),
    "standard": VolumeLimits((1, 1_024)),
}
"""EC2's limits per EBS volume type, from the Amazon EBS User Guide, "Amazon EBS volume
types" (docs.aws.amazon.com/ebs/latest/userguide/ebs-volume-types.html: sizes, IOPS ranges,
the IOPS-per-GiB ratios, "st1 and sc1 volumes can't be used as boot volumes") and the EC2 API
Reference, ``EbsBlockDevice`` (``Iops``: gp3 3,000-16,000, io1 100-64,000, io2 100-256,000;
``VolumeSize``: gp2/gp3 1-16,384, io1 4-16,384, io2 4-65,536, st1/sc1 125-16,384, standard
1-1,024). moto's server takes any of these, so they are the options' rules."""

GP3_THROUGHPUT = (125, 1_000)
GP3_THROUGHPUT_PER_IOPS = 0.25
"""gp3's throughput in MiB/s and its most per provisioned IOPS (EC2 API Reference,
``EbsBlockDevice.Throughput``: 125 to 1,000; EBS User Guide, "gp3 volumes": 0.25 MiB/s per
IOPS, so 1,000 MiB/s needs 4,000 IOPS)."""

GP3_DEFAULT_IOPS = 3_000
"""The IOPS a gp3 volume has when none are given (EBS User Guide, "gp3 volumes")."""


class RootVolume(Model):
    """An EC2 machine's root volume, which replaces the AMI's (Ubuntu's is 8 GiB).

    ``size`` in GiB (30 by default, room for a Docker build; a size below the AMI's
    snapshot is refused before launch); ``iops`` for gp3, io1 and io2;
    ``throughput`` (MiB/s) for gp3; ``kms_key`` (id or ARN) only when ``encrypted``.
    """

    size: int = Field(default=DEFAULT_VOLUME_SIZE, ge=1, le=65536)
    type: Literal["gp3", "gp2", "io1", "io2", "st1", "sc1", "standard"] = "gp3"
    iops: int | None = Field(default=None, ge=100, le=256000)
    throughput: int | None = Field(default=None, ge=125, le=2000)
    encrypted: bool = True
    kms_key: str = ""

    @model_validator(mode="after")
    def _consistent(self) -> RootVolume:
        if self.iops is not None and self.type not in ("gp3", "io1", "io2"):
            raise ValueError(
                f"iops is set, but a {self.type} volume has no provisioned IOPS: "
                "remove iops or use type gp3, io1 or io2"
            )
        if self.type in ("io1", "io2") and self.iops is None:
            raise ValueError(f"a {self.type} volume needs iops: set iops, e.g. 3000")
        if self.throughput is not None and self.type != "gp3":
            raise ValueError(
                f"throughput is set, but only gp3 volumes take one ({self.type} has none): "
                "remove throughput or use type gp3"
            )
        if self.kms_key and not self.encrypted:
            raise ValueError("kmsKey is set but encrypted is false: set encrypted: true")
        return self._within_limits()

    def _within_limits(self) -> RootVolume:
        """The volume within EC2's limits of its type (``VOLUME_LIMITS``)."""
        limits = VOLUME_LIMITS[self.type]
        if not limits.bootable:
            raise ValueError(
                f"type {self.type} cannot be a root volume: EC2 boots only from gp3, gp2, io1, "
                "io2 or standard volumes; use type gp3"
            )
        low, high = limits.sizes
        if not low <= self.size <= high:
            raise ValueError(
                f"size {self.size} GiB is outside what a {self.type} volume can be ({low} to "
                f"{high} GiB): change size or type"
            )
        if limits.iops is not None and self.iops is not None:
            low, high = limits.iops
            if not low <= self.iops <= high:
                raise ValueError(
                    f"iops {self.iops} is outside what a {self.type} volume takes ({low} to "
                    f"{high}): change iops"
                )
            most = limits.iops_per_gib * self.size
            if self.iops > most:
                raise ValueError(
                    f"iops {self.iops} is more than a {self.size} GiB {self.type} volume takes "
                    f"({limits.iops_per_gib} per GiB: at most {most}): lower iops or raise size "
                    f"to {-(-self.iops // limits.iops_per_gib)} GiB"
                )
        if self.throughput is not None:
            low, high = GP3_THROUGHPUT
            if not low <= self.throughput <= high:
                raise ValueError(
                    f"throughput {self.throughput} MiB/s is outside what a gp3 volume takes "
                    f"({low} to {high}): change throughput"
                )
            iops = self.iops or GP3_DEFAULT_IOPS
            if self.throughput > iops * GP3_THROUGHPUT_PER_IOPS:
                raise ValueError(
                    f"throughput {self.throughput} MiB/s is more than {iops} IOPS allow "
                    f"({GP3_THROUGHPUT_PER_IOPS} MiB/s per IOPS: at most "
                    f"{int(iops * GP3_THROUGHPUT_PER_IOPS)}): lower throughput or set iops to "
                    f"{int(-(-self.throughput // GP3_THROUGHPUT_PER_IOPS))}"
                )
        return self


class Metadata(Model):
    """The instance metadata service: IMDSv2 (``tokens: required``) and its hop limit.

    A hop limit of 1 keeps a container on the instance (one more network hop) from the
    instance profile's credentials; a job that needs them from inside a container needs 2.
    """

    tokens: Literal["required", "optional"] = "required"
    hop_limit: int = Field(default=1, ge=1, le=64)


TAG_KEY_MAX, TAG_VALUE_MAX = 128, 256
"""EC2's tag limits (EC2 User Guide, "Tag restrictions": a key of 1 to 128 characters, a
value of at most 256; the ``aws:`` prefix is AWS's own), refused by RunInstances."""


def tags_problem(tags: dict[str, str]) -> str:
    """Why EC2 would refuse these tags; empty when it takes them."""
    for key, value in tags.items():
        if not key or len(key) > TAG_KEY_MAX:
            return f"tag key {key!r} has {len(key)} characters: EC2 takes 1 to {TAG_KEY_MAX}"
        if key.lower().startswith("aws:"):
            return f"tag key {key!r} starts with aws:, which is AWS's own: rename it"
        if len(value) > TAG_VALUE_MAX:
            return (
                f"the value of tag {key!r} has {len(value)} characters, more than EC2's "
                f"{TAG_VALUE_MAX}: shorten it"
            )
    return ""


class Ec2Options(Options):
    """A pool's EC2 options, with defaults fit for a CI worker.

    ``image``: an AMI id; ``image_owner`` and ``image_name`` (a name filter, ``*`` allowed):
    the newest AMI of that owner and name for the type's architecture; neither: Canonical's
    newest Ubuntu 24.04 (or ``ORCA_EC2_IMAGE``). ``shutdown``: what a shutdown from inside
    does to the stack's machines (the runtime's always terminate: a stopped instance still
    bills its volume). ``tags`` are added to the orca tags, never over them.
    """

    kind: ClassVar[str] = KIND
    replacing: ClassVar[frozenset[str]] = frozenset(
        {"rootVolume.encrypted", "rootVolume.kmsKey", "image", "imageOwner", "imageName"}
    )
    """terraform-provider-aws v6 forces a new instance for the root volume's encryption and
    key and for an AMI by id; the root volume's size, type, IOPS and throughput
    (ModifyVolume), metadata options, shutdown behaviour and tags change in place. An AMI
    found anew by its filter only applies to new machines."""

    root_volume: RootVolume = RootVolume()
    metadata: Metadata = Metadata()
    shutdown: Literal["terminate", "stop"] = "terminate"
    image: str = Field(default="", pattern=r"^(ami-[0-9a-f]{8,17})?$")
    image_owner: str = ""
    image_name: str = ""
    tags: dict[str, str] = Field(default_factory=dict)

    _numbers = field_validator("tags", mode="before")(numbers_as_text)

    @field_validator("tags")
    @classmethod
    def _tags(cls, tags: dict[str, str]) -> dict[str, str]:
        why = tags_problem(tags)
        if why:
            raise ValueError(why)
        return tags

    @model_validator(mode="after")
    def _one_image(self) -> Ec2Options:
        extra_keys(self.tags, "tag")
        if self.image and (self.image_owner or self.image_name):
            raise ValueError("image and imageOwner/imageName both name the AMI: keep one of them")
        if bool(self.image_owner) != bool(self.image_name):
            missing = "imageName" if self.image_owner else "imageOwner"
            raise ValueError(f"{missing} is missing: an AMI filter needs both owner and name")
        return self
