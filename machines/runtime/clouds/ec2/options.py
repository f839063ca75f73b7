"""A pool's EC2 options (root volume, metadata service, image, tags) and their rules.

Light on purpose: the pool model, the stack file's check and the EC2 provider all read it,
so it imports neither boto3 nor anything of the provider.
"""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field, model_validator

from machines.runtime.options import Model, Options, extra_keys

KIND = "ec2"

DEFAULT_VOLUME_SIZE = 30
"""GiB of a pool machine's root volume by default (Ubuntu's AMI has 8, which a Docker build
fills in minutes; terraform-aws-github-runner's runners have 30)."""


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
        return self


class Metadata(Model):
    """The instance metadata service: IMDSv2 (``tokens: required``) and its hop limit.

    A hop limit of 1 keeps a container on the instance (one more network hop) from the
    instance profile's credentials; a job that needs them from inside a container needs 2.
    """

    tokens: Literal["required", "optional"] = "required"
    hop_limit: int = Field(default=1, ge=1, le=64)


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

    @model_validator(mode="after")
    def _one_image(self) -> Ec2Options:
        extra_keys(self.tags, "tag")
        if self.image and (self.image_owner or self.image_name):
            raise ValueError("image and imageOwner/imageName both name the AMI: keep one of them")
        if bool(self.image_owner) != bool(self.image_name):
            missing = "imageName" if self.image_owner else "imageOwner"
            raise ValueError(f"{missing} is missing: an AMI filter needs both owner and name")
        return self
