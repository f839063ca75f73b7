"""What EC2 sells in the settings' region, asked once and kept: instance types (their
architecture), the zones that offer each type, and AMIs.

Hetzner's ``catalogue.py`` holds its server types the same way. EC2 publishes no stock,
only where a type is offered (``DescribeInstanceTypeOfferings``), kept per type for
``ORCA_OFFERS_TTL``; a type's architecture (``DescribeInstanceTypes``) and an AMI
(``DescribeImages``) do not change, so each is asked once, and a miss is asked again next
time. Every request goes through the provider's one call (its retries and deadline).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from typing import Any, Protocol, TypeVar

from machines.runtime.arch import docker_arch, preferred_arch
from machines.runtime.clock import Clock
from machines.runtime.clouds.ec2.answers import Image, Images, InstanceTypes, Offerings
from machines.runtime.clouds.ec2.options import Ec2Options
from machines.runtime.clouds.ec2.settings import (
    ORCA_EC2_IMAGE,
    UBUNTU_OWNER,
    ec2_arch,
    ubuntu_ami_name,
)
from machines.runtime.errors import CloudError, MachinesError, UnknownMachineTypeError

T = TypeVar("T")

log = logging.getLogger(__name__)


class Call(Protocol):
    """The provider's one API call: ``fn`` with retries, its failures as ``CloudError``."""

    def __call__(self, operation: str, fn: Callable[[], T]) -> T: ...


class Catalogue:
    """Instance types, their zones and AMIs of one region, for one provider; thread-safe."""

    def __init__(
        self,
        call: Call,
        client: Any,
        *,
        region: str,
        zones: Sequence[str],
        image: str,
        clock: Clock,
        offers_ttl: float,
    ) -> None:
        """``zones``: the zones the settings have subnets for (the only ones asked about);
        ``image``: ``ORCA_EC2_IMAGE`` (empty for Canonical's Ubuntu)."""
        self._call = call
        self._client = client
        self.region = region
        self._zones = sorted(zones)
        self._image = image
        self._clock = clock
        self._offers_ttl = offers_ttl
        self._arch_lock = threading.Lock()
        self._offers_lock = threading.Lock()
        self._image_lock = threading.Lock()
        self._archs: dict[str, str] = {}
        self._offered: dict[str, tuple[float, list[str]]] = {}
        self._images: dict[tuple[str, ...], Image] = {}

    def arch(self, machine_type: str) -> str:
        """Docker's architecture of ``machine_type``, asked of EC2 once per type; a type EC2
        does not have raises ``UnknownMachineTypeError`` (and is asked again next time)."""
        known = self._archs.get(machine_type)
        if known is None:
            with self._arch_lock:
                known = self._archs.get(machine_type)
                if known is None:
                    known = self._lookup_arch(machine_type)
                    self._archs[machine_type] = known
        return known

    def offered(self, machine_type: str) -> list[str]:
        """The settings' zones that offer ``machine_type``, sorted, kept ``offers_ttl``."""
        with self._offers_lock:
            known = self._offered.get(machine_type)
            if known is None or self._clock() - known[0] >= self._offers_ttl:
                known = (self._clock(), self.offered_now(machine_type))
                self._offered[machine_type] = known
        return known[1]

    def offered_now(self, machine_type: str) -> list[str]:
        """The settings' zones that offer ``machine_type``, asked now (one request)."""
        answer = self._call(
            "DescribeInstanceTypeOfferings",
            lambda: Offerings.model_validate(
                self._client.describe_instance_type_offerings(
                    LocationType="availability-zone",
                    Filters=[
                        {"Name": "instance-type", "Values": [machine_type]},
                        {"Name": "location", "Values": self._zones},
                    ],
                )
            ),
        )
        offered = {o.location for o in answer.offerings if o.type == machine_type}
        return [zone for zone in self._zones if zone in offered]

    def image_for(
        self, pool: str, machine_type: str, options: Ec2Options, setting: str = ORCA_EC2_IMAGE
    ) -> Image:
        """The AMI of ``pool`` for its type's architecture, each looked up once: the pool's
        ``ec2.image`` (by id) or ``ec2.imageOwner`` + ``ec2.imageName`` (the newest match),
        else ``ORCA_EC2_IMAGE``, else Canonical's newest Ubuntu 24.04. An AMI that does not
        exist or runs another architecture raises ``MachinesError`` naming the key, before
        anything is launched; ``setting`` is how the message names ``ORCA_EC2_IMAGE`` (a
        stack's ``image`` key, checked before its engine runs)."""
        arch = self.arch(machine_type)
        if options.image or (self._image and not options.image_name):
            return self._image_by_id(pool, machine_type, arch, options, setting)
        owner = options.image_owner or UBUNTU_OWNER
        name = options.image_name or ubuntu_ami_name(arch)
        found = self._kept(("filter", owner, name, arch), lambda: self._newest(owner, name, arch))
        if found is None:
            if options.image_name:
                raise MachinesError(
                    f"pool {pool}: ec2.imageOwner {owner} has no AMI named {name!r} for "
                    f"{arch} in {self.region}: fix imageName or imageOwner"
                )
            raise MachinesError(
                f"no Ubuntu 24.04 image of Canonical ({UBUNTU_OWNER}) for {arch} in "
                f"{self.region}; set {setting} or the pool's ec2.image"
            )
        return found

    def _image_by_id(
        self, pool: str, machine_type: str, arch: str, options: Ec2Options, setting: str
    ) -> Image:
        """The AMI the pool's ``ec2.image`` or ``ORCA_EC2_IMAGE`` (``setting``) names, checked."""
        image_id = options.image or self._image
        key = f"pool {pool}: ec2.image" if options.image else setting
        image = self._kept(("id", image_id), lambda: self._described(image_id))
        if image is None:
            check = "the pool's ec2.image" if options.image else setting
            raise MachinesError(
                f"{key} {image_id} is no AMI EC2 has in {self.region} "
                f"(InvalidAMIID.NotFound): name an AMI of this region; check {check}"
            )
        if image.architecture and docker_arch(image.architecture) != arch:
            raise MachinesError(
                f"{key} {image_id} is an {docker_arch(image.architecture)} AMI, but "
                f"{machine_type} is {arch}: name an AMI of {arch} or another type"
            )
        return image

    def _kept(self, key: tuple[str, ...], find: Callable[[], Image | None]) -> Image | None:
        """An AMI looked up once per key (a miss is asked again next time)."""
        known = self._images.get(key)
        if known is None:
            with self._image_lock:
                known = self._images.get(key)
                if known is None:
                    known = find()
                    if known is not None:
                        self._images[key] = known
        return known

    def _described(self, image_id: str) -> Image | None:
        try:
            answer = self._call(
                "DescribeImages",
                lambda: Images.model_validate(self._client.describe_images(ImageIds=[image_id])),
            )
        except CloudError as err:
            if err.code in ("InvalidAMIID.NotFound", "InvalidAMIID.Malformed"):
                return None
            raise
        return next((i for i in answer.images if i.id == image_id), None)

    def _newest(self, owner: str, name: str, arch: str) -> Image | None:
        answer = self._call(
            "DescribeImages",
            lambda: Images.model_validate(
                self._client.describe_images(
                    Owners=[owner],
                    Filters=[
                        {"Name": "name", "Values": [name]},
                        {"Name": "architecture", "Values": [ec2_arch(arch)]},
                        {"Name": "state", "Values": ["available"]},
                    ],
                )
            ),
        )
        if not answer.images:
            return None
        newest = max(answer.images, key=lambda image: (image.created, image.name))
        log.info("using image %s (%s) for %s", newest.id, newest.name, arch)
        return newest

    def _lookup_arch(self, machine_type: str) -> str:
        try:
            answer = self._call(
                "DescribeInstanceTypes",
                lambda: InstanceTypes.model_validate(
                    self._client.describe_instance_types(InstanceTypes=[machine_type])
                ),
            )
        except CloudError as err:
            if err.code != "InvalidInstanceType":
                raise
            answer = InstanceTypes(InstanceTypes=[])
        arch = preferred_arch([a for t in answer.types for a in t.processor.architectures])
        if not arch:
            raise UnknownMachineTypeError(
                f"EC2 has no instance type {machine_type!r} in {self.region}: use a type "
                "from `aws ec2 describe-instance-types`, e.g. t3.small (amd64) or t4g.small "
                "(arm64)"
            )
        return arch
