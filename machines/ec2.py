"""EC2 instances for the autoscaler, behind the same ``Provider`` API as Hetzner.

A pool machine is an instance tagged at launch with the pool's labels and ``Name``. EC2
names are not unique, so ``create`` keeps one live instance per name itself: it looks
before it launches and serialises creates of one name within the provider. Each ``create``
sends its own ClientToken, so EC2 makes at most one instance for all retries of that call;
after a lost answer ``create`` also looks for the instance before it sends RunInstances
again, so an endpoint that ignores the token (moto) makes one too.

Retries are botocore's standard mode (throttling codes such as RequestLimitExceeded, 5xx,
connection errors and timeouts, full-jitter exponential backoff, a retry quota), given up
when the next try would start after the call's time (``ORCA_CALL_TIMEOUT``).

botocore logs request parameters and headers at DEBUG: the provider redacts user data and
credentials from the records of the AWS libraries' loggers (see ``redact_aws_logs``).

boto3 is imported here and nowhere else; ``Provider.of("ec2")`` imports this module.
"""

from __future__ import annotations

import functools
import logging
import re
import threading
import time
import uuid
import weakref
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import datetime
from typing import Any, ClassVar

import boto3.session
import botocore.session
from botocore.config import Config
from botocore.exceptions import (
    BotoCoreError,
    ClientError,
    ConnectTimeoutError,
    HTTPClientError,
    NoCredentialsError,
    ReadTimeoutError,
)
from botocore.exceptions import ConnectionError as NoConnectionError
from botocore.parsers import ResponseParserError
from botocore.retries import standard as standard_retries
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from machines import retry
from machines.arch import AMD64, ARM64, UBUNTU_OWNER, docker_arch, ec2_arch, ubuntu_ami_name
from machines.errors import CloudError, ForeignMachineError, UnknownMachineTypeError
from machines.labels import (
    ORCA_LABEL,
    ORCA_VALUE,
    OWNER_LABEL,
    POOL_LABEL,
    belongs_to,
    check_pool,
    pool_labels,
)
from machines.models import Created, Machine, MachineSpec, Status, machine_address
from machines.provider import Provider
from machines.settings import (
    ORCA_EC2_IMAGE,
    ORCA_EC2_INSTANCE_PROFILE,
    ORCA_EC2_SECURITY_GROUP,
    ORCA_EC2_SUBNETS,
    Ec2Settings,
    Timeouts,
)

log = logging.getLogger(__name__)

MAX_RESULTS = 1000
"""Page size of ``DescribeInstances`` (EC2 takes 5 to 1000); tests lower it to see pages."""

NAME_TAG = "Name"

STATUSES: Mapping[str, Status] = {
    "pending": Status.STARTING,
    "running": Status.RUNNING,
    "stopping": Status.STOPPING,
    "stopped": Status.OFF,
    "shutting-down": Status.DELETING,
    "terminated": Status.DELETING,
}
"""EC2 instance states in the shared vocabulary; any other state is ``unknown``."""


def status_of(ec2_state: str | None) -> Status:
    """The shared status for an EC2 instance state."""
    return STATUSES.get(ec2_state or "", Status.UNKNOWN)


LIVE_STATES = ("pending", "running", "stopping", "stopped")
"""States of an instance that holds its name: it runs or can be started again."""

LISTED_STATES = (*LIVE_STATES, "shutting-down")
"""States ``machines`` reports: all but terminated, which EC2 keeps listing for a while."""

NO_STOCK_CODES = frozenset(
    {"InsufficientInstanceCapacity", "InsufficientHostCapacity", "Unsupported"}
)
"""RunInstances errors that mean no capacity for the type in that zone now, not a mistake."""

TIMEOUT = "timeout"
CONNECTION = "connection"
CREDENTIALS = "credentials"
NOT_EC2 = "not_ec2"
UNANSWERED = frozenset({TIMEOUT, CONNECTION, CREDENTIALS, NOT_EC2})
"""``CloudError`` codes for calls EC2 never answered (the others are EC2's own codes)."""

CREDENTIAL_CODES = frozenset(
    {
        "AuthFailure",
        "InvalidClientTokenId",
        "SignatureDoesNotMatch",
        "IncompleteSignature",
        "UnrecognizedClientException",
        "ExpiredToken",
    }
)
"""EC2's refusals of the credentials themselves (not of what they may do)."""

_ANSWER_LOST = frozenset({TIMEOUT, CONNECTION})
_MAX_ATTEMPTS = 10
"""botocore's cap on tries per request; the call's time usually ends them first."""
_STARTED = "orca_started"
"""Key in botocore's request context: when the API call began, for its time bound."""
_POOL_CONNECTIONS = 32
_INSTANCE_ID = re.compile(r"i-(?:[0-9a-f]{8}|[0-9a-f]{17})")
_CREDENTIAL_VARIABLES = {
    "AWS_ACCESS_KEY_ID": "aws_access_key_id",
    "AWS_SECRET_ACCESS_KEY": "aws_secret_access_key",
    "AWS_SESSION_TOKEN": "aws_session_token",
    "AWS_PROFILE": "profile_name",
}


class _Answer(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore")


class _Tag(_Answer):
    key: str = Field(alias="Key")
    value: str = Field(alias="Value")


class _State(_Answer):
    name: str = Field(alias="Name")


class _Placement(_Answer):
    zone: str = Field(default="", alias="AvailabilityZone")


class _Instance(_Answer):
    """The fields of an EC2 instance this module reads."""

    id: str = Field(alias="InstanceId")
    type: str = Field(alias="InstanceType")
    state: _State = Field(alias="State")
    placement: _Placement = Field(default_factory=_Placement, alias="Placement")
    public_ip: str = Field(default="", alias="PublicIpAddress")
    private_ip: str = Field(default="", alias="PrivateIpAddress")
    tag_list: list[_Tag] = Field(default_factory=list, alias="Tags")

    @property
    def tags(self) -> dict[str, str]:
        return {tag.key: tag.value for tag in self.tag_list}


class _Reservation(_Answer):
    instances: list[_Instance] = Field(default_factory=list, alias="Instances")


class _InstancesPage(_Answer):
    reservations: list[_Reservation] = Field(default_factory=list, alias="Reservations")


class _Processor(_Answer):
    architectures: list[str] = Field(default_factory=list, alias="SupportedArchitectures")


class _InstanceType(_Answer):
    name: str = Field(alias="InstanceType")
    processor: _Processor = Field(default_factory=_Processor, alias="ProcessorInfo")


class _InstanceTypes(_Answer):
    types: list[_InstanceType] = Field(default_factory=list, alias="InstanceTypes")


class _Image(_Answer):
    id: str = Field(alias="ImageId")
    name: str = Field(default="", alias="Name")
    created: datetime = Field(alias="CreationDate")


class _Images(_Answer):
    images: list[_Image] = Field(default_factory=list, alias="Images")


class Ec2Provider(Provider):
    """EC2 instances of one account and region for one owner; safe to share between threads.

    ``image`` is ``ORCA_EC2_IMAGE``, or empty for Canonical's newest Ubuntu 24.04 LTS image
    of each type's architecture.
    """

    kind: ClassVar[str] = "ec2"

    def __init__(
        self,
        owner: str,
        settings: Ec2Settings,
        *,
        credentials: Mapping[str, str] | None = None,
    ) -> None:
        """Build the provider from its settings.

        ``credentials`` may hold AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN
        or AWS_PROFILE; what it lacks, boto3's default chain finds.
        """
        super().__init__(owner, settings.image)
        self.region = settings.region
        self.subnets: Mapping[str, str] = dict(settings.subnets)
        self.security_group = settings.security_group
        self.instance_profile = settings.instance_profile
        self._timeouts = settings.timeouts
        self._client = _client(settings, credentials)
        self._endpoint: str = self._client.meta.endpoint_url
        redact_aws_logs()
        self._lock = threading.Lock()
        self._arch_lock = threading.Lock()
        self._image_lock = threading.Lock()
        self._archs: dict[str, str] = {}
        self._images: dict[str, str] = {}
        self._name_locks: weakref.WeakValueDictionary[str, threading.Lock] = (
            weakref.WeakValueDictionary()
        )
        self._launched: dict[str, Machine] = {}

    @classmethod
    def from_env(cls, owner: str, environ: Mapping[str, str] | None = None) -> Ec2Provider:
        """The provider of ``Ec2Settings.from_env(environ)``, with credentials from
        ``environ`` when it has them, else from boto3's default chain."""
        return cls(owner, Ec2Settings.from_env(environ), credentials=environ)

    def arch(self, machine_type: str) -> str:
        """Docker's architecture of an instance type, asked of EC2 once per type."""
        known = self._archs.get(machine_type)
        if known is not None:
            return known
        with self._arch_lock:
            known = self._archs.get(machine_type)
            if known is None:
                known = self._lookup_arch(machine_type)
                self._archs[machine_type] = known
        return known

    def create(self, spec: MachineSpec) -> Created:
        """Launch one instance for ``spec``, or return the live one of that name already made.

        Never raises for the cloud's trouble: EC2's refusals come back as ``no_stock`` or
        ``failed``, and so does a call EC2 never answered; when RunInstances lost its
        answer, ``reason`` says the instance may exist all the same.
        """
        subnet = self.subnets.get(spec.location)
        if subnet is None:
            known = ", ".join(sorted(self.subnets))
            return Created.failure(
                f"cannot create {spec.name!r}: no subnet for location {spec.location!r}; "
                f"{ORCA_EC2_SUBNETS} knows {known}"
            )
        with self._name_lock(spec.name):
            try:
                return self._create(spec, subnet)
            except UnknownMachineTypeError as err:
                return Created.failure(f"cannot create {spec.name!r}: {err}")
            except CloudError as err:
                if err.code in NO_STOCK_CODES:
                    return Created.out_of_stock(
                        f"no {spec.machine_type} for {spec.name!r} in {spec.location} now: {err}"
                    )
                return Created.failure(f"cannot create {spec.name!r}: {err}")

    def machines(self, pool: str) -> list[Machine]:
        """The instances of ``pool`` and this owner that are not terminated, by name."""
        check_pool(pool)
        filters = {
            f"tag:{ORCA_LABEL}": [ORCA_VALUE],
            f"tag:{POOL_LABEL}": [pool],
            "instance-state-name": list(LISTED_STATES),
        }
        if self.owner:
            filters[f"tag:{OWNER_LABEL}"] = [self.owner]
        found = [
            _machine(instance)
            for instance in self._find(filters)
            if belongs_to(instance.tags, self.owner, pool)
        ]
        return sorted(found, key=lambda machine: (machine.name, machine.id))

    def delete(self, machine_id: str) -> bool:
        """Terminate this owner's pool instance; True when it is gone or going, or unknown."""
        if not _INSTANCE_ID.fullmatch(machine_id):
            raise CloudError(
                f"{machine_id!r} is not an EC2 instance id: expected i- and 8 or 17 hex digits",
                code="InvalidInstanceID.Malformed",
            )
        instance = self._instance(machine_id)
        if instance is None:
            return True
        foreign = _foreign_reason(instance.tags, self.owner)
        if foreign:
            raise ForeignMachineError(
                f"instance {machine_id} {foreign}: it is not a pool machine of "
                f"{_whose(self.owner)}, so it is left alone"
            )
        self._forget(machine_id)
        if instance.state.name == "terminated":
            return True
        try:
            with self._answers("TerminateInstances"):
                self._client.terminate_instances(InstanceIds=[machine_id])
        except CloudError as err:
            if err.code != "InvalidInstanceID.NotFound":
                raise
        log.info("terminating instance %s (%s)", machine_id, instance.tags.get(NAME_TAG, ""))
        return True

    def _create(self, spec: MachineSpec, subnet: str) -> Created:
        existing = self._live_named(spec.name)
        mine = [i for i in existing if belongs_to(i.tags, self.owner, spec.pool)]
        if mine:
            log.info("instance %s is already %r: not launching another", mine[0].id, spec.name)
            return Created.success(_machine(mine[0]))
        if existing:
            other = existing[0]
            return Created.failure(
                f"cannot create {spec.name!r}: the name is taken by instance {other.id}, "
                f"{_describe(other.tags)}; pick another name or delete that instance"
            )
        remembered = self._remembered(spec)
        if remembered is not None:
            return Created.success(remembered)
        image = self._image_for(spec.machine_type)
        if not image:
            return Created.failure(
                f"cannot create {spec.name!r}: no Ubuntu 24.04 image of Canonical "
                f"({UBUNTU_OWNER}) for {self.arch(spec.machine_type)} in {self.region}; "
                f"set {ORCA_EC2_IMAGE}"
            )
        machine = self._launch(spec, subnet, image)
        with self._lock:
            self._launched[spec.name] = machine
        return Created.success(machine)

    def _launch(self, spec: MachineSpec, subnet: str, image: str) -> Machine:
        """RunInstances with one token for every try; after a lost answer, look first.

        Tries go on with backoff within the call's time. A lost answer may mean a launched
        instance, so the next try looks for it by name and sends RunInstances (same token)
        only when it is not there.
        """
        tags = {NAME_TAG: spec.name, **pool_labels(spec.pool, self.owner)}
        tag_list = [{"Key": key, "Value": value} for key, value in tags.items()]
        params: dict[str, object] = {
            "ClientToken": str(uuid.uuid4()),
            "ImageId": image,
            "InstanceType": spec.machine_type,
            "MinCount": 1,
            "MaxCount": 1,
            "SubnetId": subnet,
            "SecurityGroupIds": [self.security_group],
            "IamInstanceProfile": _profile(self.instance_profile),
            "TagSpecifications": [
                {"ResourceType": kind, "Tags": tag_list} for kind in ("instance", "volume")
            ],
        }
        if spec.user_data:
            params["UserData"] = spec.user_data
        lost = False

        def launch_or_find() -> _Instance:
            nonlocal lost
            if lost:
                found = self._mine_named(spec)
                if found is not None:
                    log.info("instance %s of the lost answer is %r", found.id, spec.name)
                    return found
            try:
                return self._run_instance(params)
            except CloudError as err:
                if err.code in _ANSWER_LOST:
                    lost = True
                raise

        try:
            instance = retry.call(
                launch_or_find,
                _retry_lost_answer,
                deadline=self._timeouts.call,
                what=f"RunInstances for {spec.name!r}",
            )
        except retry.GaveUp as gave_up:
            raise _lost_launch(spec, gave_up.last, gave_up.attempts) from None
        except CloudError as err:
            if lost:
                raise _lost_launch(spec, err, 1) from None
            raise
        log.info("launched instance %s as %r in %s", instance.id, spec.name, spec.location)
        return _machine(instance, tags)

    def _run_instance(self, params: Mapping[str, object]) -> _Instance:
        with self._answers("RunInstances"):
            reservation = _Reservation.model_validate(self._client.run_instances(**params))
        if len(reservation.instances) != 1:
            raise CloudError(
                f"EC2 RunInstances at {self._endpoint} answered with "
                f"{len(reservation.instances)} instances instead of one",
                code=NOT_EC2,
            )
        return reservation.instances[0]

    def _mine_named(self, spec: MachineSpec) -> _Instance | None:
        """The live instance named ``spec.name`` of this owner and ``spec.pool``, if any."""
        mine = [i for i in self._live_named(spec.name) if belongs_to(i.tags, self.owner, spec.pool)]
        return mine[0] if mine else None

    def _remembered(self, spec: MachineSpec) -> Machine | None:
        """The instance this provider launched as ``spec.name``, if EC2 may not list it yet.

        EC2's lists are eventually consistent: a name filter can miss an instance launched
        a moment ago, while asking for its id tells whether it is still alive.
        """
        with self._lock:
            machine = self._launched.get(spec.name)
        if machine is None or machine.pool != spec.pool:
            return None
        instance = self._instance(machine.id)
        if instance is None:
            return machine
        if instance.state.name in LIVE_STATES:
            return _machine(instance)
        self._forget(machine.id)
        return None

    def _forget(self, machine_id: str) -> None:
        with self._lock:
            for name, machine in list(self._launched.items()):
                if machine.id == machine_id:
                    del self._launched[name]

    def _name_lock(self, name: str) -> threading.Lock:
        with self._lock:
            lock = self._name_locks.get(name)
            if lock is None:
                lock = threading.Lock()
                self._name_locks[name] = lock
            return lock

    def _live_named(self, name: str) -> list[_Instance]:
        return self._find({f"tag:{NAME_TAG}": [name], "instance-state-name": list(LIVE_STATES)})

    def _find(self, filters: Mapping[str, Sequence[str]]) -> list[_Instance]:
        """Every instance matching ``filters``, over all of DescribeInstances' pages."""
        pages = self._client.get_paginator("describe_instances").paginate(
            Filters=[{"Name": name, "Values": list(values)} for name, values in filters.items()],
            PaginationConfig={"PageSize": MAX_RESULTS},
        )
        found: list[_Instance] = []
        with self._answers("DescribeInstances"):
            for page in pages:
                for reservation in _InstancesPage.model_validate(page).reservations:
                    found.extend(reservation.instances)
        return found

    def _instance(self, machine_id: str) -> _Instance | None:
        """The instance of that id, or None when EC2 does not know it."""
        try:
            with self._answers("DescribeInstances"):
                page = _InstancesPage.model_validate(
                    self._client.describe_instances(InstanceIds=[machine_id])
                )
        except CloudError as err:
            if err.code == "InvalidInstanceID.NotFound":
                return None
            raise
        instances = [i for r in page.reservations for i in r.instances if i.id == machine_id]
        return instances[0] if instances else None

    def _lookup_arch(self, machine_type: str) -> str:
        try:
            with self._answers("DescribeInstanceTypes"):
                answer = _InstanceTypes.model_validate(
                    self._client.describe_instance_types(InstanceTypes=[machine_type])
                )
        except CloudError as err:
            if err.code != "InvalidInstanceType":
                raise
            answer = _InstanceTypes()
        archs = [docker_arch(a) for t in answer.types for a in t.processor.architectures]
        if not archs:
            raise UnknownMachineTypeError(
                f"EC2 has no instance type {machine_type!r} in {self.region}: use a type "
                "from `aws ec2 describe-instance-types`, e.g. t3.small (amd64) or t4g.small "
                "(arm64)"
            )
        return next((a for a in archs if a in (AMD64, ARM64)), archs[0])

    def _image_for(self, machine_type: str) -> str:
        """``ORCA_EC2_IMAGE``, else Canonical's newest Ubuntu 24.04 for the type's
        architecture (looked up once per architecture); empty when there is none."""
        if self.image:
            return self.image
        arch = self.arch(machine_type)
        known = self._images.get(arch)
        if known is not None:
            return known
        with self._image_lock:
            known = self._images.get(arch)
            if known is None:
                known = self._newest_ubuntu(arch)
                if known:
                    self._images[arch] = known
        return known

    def _newest_ubuntu(self, arch: str) -> str:
        with self._answers("DescribeImages"):
            answer = _Images.model_validate(
                self._client.describe_images(
                    Owners=[UBUNTU_OWNER],
                    Filters=[
                        {"Name": "name", "Values": [ubuntu_ami_name(arch)]},
                        {"Name": "architecture", "Values": [ec2_arch(arch)]},
                        {"Name": "state", "Values": ["available"]},
                    ],
                )
            )
        if not answer.images:
            return ""
        newest = max(answer.images, key=lambda image: (image.created, image.name))
        log.info("using image %s (%s) for %s", newest.id, newest.name, arch)
        return newest.id

    @contextmanager
    def _answers(self, operation: str) -> Iterator[None]:
        """Turn what boto3 raises into ``CloudError``: EC2's code, or why no answer came.

        Messages carry the operation, codes and EC2's message, never parameters (user
        data) nor a botocore traceback.
        """
        where = f"EC2 {operation} at {self._endpoint}"
        try:
            yield
        except ClientError as err:
            error = err.response.get("Error", {})
            code = str(error.get("Code", "")) or "Unknown"
            message = str(error.get("Message", "")).strip()
            hint = _hint(code, operation, message)
            retries = err.response.get("ResponseMetadata", {}).get("RetryAttempts", 0)
            tries = f" (after {retries + 1} tries)" if retries else ""
            raise CloudError(
                f"{where} was refused{tries}: {code}: {message or 'no message'}{hint}", code=code
            ) from None
        except (ReadTimeoutError, ConnectTimeoutError):
            raise CloudError(
                f"{where} did not answer in time, retries included (ORCA_REQUEST_TIMEOUT)",
                code=TIMEOUT,
            ) from None
        except (NoConnectionError, HTTPClientError) as err:
            raise CloudError(
                f"{where} could not be reached ({type(err).__name__}): check the network, "
                "AWS_REGION and AWS_ENDPOINT_URL",
                code=CONNECTION,
            ) from None
        except NoCredentialsError:
            raise CloudError(
                f"{where}: no AWS credentials found: set AWS_ACCESS_KEY_ID and "
                "AWS_SECRET_ACCESS_KEY, AWS_PROFILE, or give the machine a role",
                code=CREDENTIALS,
            ) from None
        except (ResponseParserError, ValidationError):
            raise CloudError(
                f"{where} answered something that is not EC2's: is AWS_ENDPOINT_URL an EC2 "
                "endpoint?",
                code=NOT_EC2,
            ) from None
        except BotoCoreError as err:
            raise CloudError(
                f"{where} failed in the AWS client: {type(err).__name__}",
                code=type(err).__name__,
            ) from None


def _lost_launch(spec: MachineSpec, last: Exception, tries: int) -> CloudError:
    """The error of a launch that ended after RunInstances lost an answer."""
    after = f" after {tries} tries" if tries > 1 else ""
    return CloudError(
        f"RunInstances for {spec.name!r} lost its answer{after} ({last}): the instance may "
        f"have launched all the same; machines({spec.pool!r}) will show it, and creating "
        f"{spec.name!r} again returns it",
        code=getattr(last, "code", CONNECTION),
    )


def _retry_lost_answer(error: Exception) -> float | None:
    """``retry.call``'s view of a launch: try again (looking first) only after a lost answer."""
    return 0.0 if isinstance(error, CloudError) and error.code in _ANSWER_LOST else None


_SETTING_OF_CODE = (
    ("InvalidGroup", ORCA_EC2_SECURITY_GROUP),
    ("InvalidSubnet", ORCA_EC2_SUBNETS),
    ("InvalidAMIID", ORCA_EC2_IMAGE),
)
"""Prefixes of EC2 error codes about a resource named in a setting, and that setting."""


def _hint(code: str, operation: str, message: str) -> str:
    """What to do about an EC2 error, for its message; empty when EC2's says enough."""
    setting = next((name for prefix, name in _SETTING_OF_CODE if code.startswith(prefix)), "")
    if not setting and re.search("instance ?profile", message, re.IGNORECASE):
        setting = ORCA_EC2_INSTANCE_PROFILE
    if setting:
        return f": check {setting}"
    if code.isdigit():
        return " (is AWS_ENDPOINT_URL an EC2 endpoint?)"
    hints = {
        **dict.fromkeys(
            CREDENTIAL_CODES,
            ": check the credentials (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, "
            "AWS_SESSION_TOKEN, AWS_PROFILE or the machine's role)",
        ),
        "RequestExpired": ": check this machine's clock",
        "UnauthorizedOperation": (
            f": the credentials may not call ec2:{operation}; allow it in their IAM policy"
        ),
    }
    return hints.get(code, "")


class _BoundedRetries:
    """botocore's standard retries within the call's time; no resent launch after a lost answer.

    ``standard`` (botocore's standard retry handler) decides whether a try is worth another
    and how long to wait. This gives up instead when that wait would end after the call's
    time, and leaves a RunInstances whose answer may be lost to ``Ec2Provider._launch``,
    which looks for the instance before sending it again.
    """

    def __init__(self, standard: Any, seconds: float) -> None:
        self._standard = standard
        self._seconds = seconds

    def start(self, context: dict[str, Any], **_: Any) -> None:
        """``before-call``: note when the API call began."""
        context[_STARTED] = time.monotonic()

    def needs_retry(
        self,
        request_dict: dict[str, Any],
        operation: Any,
        attempts: int,
        response: Any = None,
        caught_exception: Exception | None = None,
        **kwargs: Any,
    ) -> float | None:
        """``needs-retry``: the seconds to wait before the next try, or None for no retry."""
        if operation.name == "RunInstances" and isinstance(caught_exception, HTTPClientError):
            return None
        delay = self._standard.needs_retry(
            request_dict=request_dict,
            operation=operation,
            attempts=attempts,
            response=response,
            caught_exception=caught_exception,
            **kwargs,
        )
        if not isinstance(delay, int | float) or isinstance(delay, bool):
            return None
        context = request_dict.get("context", {})
        elapsed = time.monotonic() - context.get(_STARTED, time.monotonic())
        if elapsed + delay >= self._seconds:
            return None
        log.warning(
            "EC2 %s failed (%s), retry %d in %.2f s",
            operation.name,
            _failure(response, caught_exception),
            attempts,
            delay,
        )
        return float(delay)


def _failure(response: Any, caught_exception: Exception | None) -> str:
    """A try's failure in a few words: EC2's code, else the HTTP status or the exception."""
    if caught_exception is not None:
        return type(caught_exception).__name__
    http_response, parsed = response
    code = parsed.get("Error", {}).get("Code") if isinstance(parsed, dict) else None
    return f"{code or 'HTTP'} {http_response.status_code}"


AWS_LOGGERS = (
    "botocore.auth",
    "botocore.awsrequest",
    "botocore.client",
    "botocore.credentials",
    "botocore.endpoint",
    "botocore.hooks",
    "botocore.httpsession",
    "botocore.parsers",
    "botocore.retries.standard",
    "botocore.retryhandler",
    "urllib3.connection",
    "urllib3.connectionpool",
)
"""Loggers of the AWS libraries that may log a request's parameters, headers or answer.

A filter on a logger sees only the records of that logger, not of its children: hence
each module's logger, not ``botocore``."""

_SECRET = re.compile(
    r"(?P<key>\b(?:UserData|X-Amz-Security-Token|Signature|SecretAccessKey|SessionToken"
    r"|aws_secret_access_key|aws_session_token|Password)['\"]?\s*[:=]\s*)"
    r"(?P<value>b?'[^']*'|b?\"[^\"]*\"|[^\s,&;}'\"<]+)",
    re.IGNORECASE,
)
_USER_DATA_XML = re.compile(r"(<userData>).*?(</userData>)", re.IGNORECASE | re.DOTALL)
REDACTED = "<redacted>"


def redact(text: str) -> str:
    """``text`` with user data, session tokens, signatures and secret keys blanked out."""
    text = _SECRET.sub(lambda m: m.group("key") + REDACTED, text)
    return _USER_DATA_XML.sub(rf"\1{REDACTED}\2", text)


class RedactSecrets(logging.Filter):
    """Rewrites a record's message without secrets; drops no record."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except (TypeError, ValueError):
            return True
        clean = redact(message)
        if clean != message:
            record.msg, record.args = clean, ()
        return True


def redact_aws_logs() -> None:
    """Put one ``RedactSecrets`` on each of ``AWS_LOGGERS``; calling again adds none.

    botocore logs at DEBUG the parameters of each request (UserData among them) and its
    signed headers (the session token); the filter runs only for records a logger makes,
    so it costs nothing while DEBUG is off.
    """
    for name in AWS_LOGGERS:
        logger = logging.getLogger(name)
        if not any(isinstance(f, RedactSecrets) for f in logger.filters):
            logger.addFilter(RedactSecrets())


def _client(settings: Ec2Settings, credentials: Mapping[str, str] | None) -> Any:
    """An EC2 client from its own session (sessions are not thread-safe, clients are).

    botocore's own retry handler gets one try, so it never retries: the standard handler
    made here does, inside the call's time (``_BoundedRetries``). botocore registers that
    handler's ``needs-retry`` under the id its own already holds, which leaves it unhooked
    for ``_BoundedRetries`` to call.
    """
    given = credentials or {}
    session = boto3.session.Session(
        botocore_session=_botocore_session(),
        region_name=settings.region,
        **{arg: given[name] for name, arg in _CREDENTIAL_VARIABLES.items() if given.get(name)},
    )
    client = session.client(
        "ec2",
        region_name=settings.region,
        endpoint_url=settings.endpoint_url or None,
        config=_config(settings.timeouts),
    )
    standard = standard_retries.register_retry_handler(client, max_attempts=_MAX_ATTEMPTS)
    bounded = _BoundedRetries(standard, settings.timeouts.call)
    client.meta.events.register("before-call.ec2", bounded.start, unique_id="orca-call-start")
    client.meta.events.register("needs-retry.ec2", bounded.needs_retry, unique_id="orca-retries")
    return client


def _botocore_session() -> Any:
    """A new botocore session that shares the process's loader of botocore's JSON models."""
    session = botocore.session.Session()
    session.register_component("data_loader", _shared_loader())
    return session


@functools.cache
def _shared_loader() -> Any:
    """botocore's model loader, made once: a session would otherwise parse megabytes of JSON
    again, a tenth of a second per provider. It only reads files and caches what it read."""
    return botocore.session.Session().get_component("data_loader")


def _config(timeouts: Timeouts) -> Config:
    """Timeouts of each request, and one try for botocore's own retry handler (see ``_client``).

    ``total_max_attempts`` counts the first try; ``max_attempts`` would count retries.
    """
    return Config(
        retries={"mode": "standard", "total_max_attempts": 1},
        connect_timeout=timeouts.request,
        read_timeout=timeouts.request,
        max_pool_connections=_POOL_CONNECTIONS,
    )


def _profile(instance_profile: str) -> dict[str, str]:
    """RunInstances' IamInstanceProfile for a profile given by ARN or by name."""
    key = "Arn" if instance_profile.startswith("arn:") else "Name"
    return {key: instance_profile}


def _machine(instance: _Instance, tags: Mapping[str, str] | None = None) -> Machine:
    """The shared ``Machine`` of an instance; ``tags`` replace the instance's when given."""
    labels = instance.tags if tags is None else tags
    return Machine(
        id=instance.id,
        name=labels.get(NAME_TAG, ""),
        status=status_of(instance.state.name),
        machine_type=instance.type,
        location=instance.placement.zone,
        address=machine_address(instance.public_ip, instance.private_ip),
        pool=labels.get(POOL_LABEL, ""),
    )


def _whose(owner: str) -> str:
    return f"owner {owner!r}" if owner else "no owner"


def _describe(tags: Mapping[str, str]) -> str:
    """Whose instance the tags say it is, for messages."""
    if tags.get(ORCA_LABEL) != ORCA_VALUE:
        return "which is not an orca pool machine"
    return f"of pool {tags.get(POOL_LABEL, '')!r} and {_whose(tags.get(OWNER_LABEL, ''))}"


def _foreign_reason(tags: Mapping[str, str], owner: str) -> str:
    """Why an instance is not ``owner``'s pool machine; empty when it is."""
    if belongs_to(tags, owner):
        return ""
    if tags.get(ORCA_LABEL) != ORCA_VALUE:
        return f"has no {ORCA_LABEL}={ORCA_VALUE} tag"
    theirs = tags.get(OWNER_LABEL, "")
    if not theirs:
        return f"has no {OWNER_LABEL} tag"
    return f"belongs to owner {theirs!r} ({OWNER_LABEL} tag)"
