"""EC2's answers in the package's terms: their shapes, statuses, machines and errors.

Every answer is validated against the fields this package reads before it is believed: an
answer of another shape is a ``CloudError`` (``NOT_THE_API``), never a success.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import UTC, datetime
from decimal import Decimal

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
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from machines.runtime.clouds.ec2.settings import (
    AWS_ACCESS_KEY_ID,
    AWS_ENDPOINT_URL,
    AWS_PROFILE,
    AWS_REGION,
    AWS_SECRET_ACCESS_KEY,
    AWS_SESSION_TOKEN,
    NAME_TAG,
    NO_STOCK_CODES,
    ORCA_EC2_IMAGE,
    ORCA_EC2_INSTANCE_PROFILE,
    ORCA_EC2_SECURITY_GROUP,
    ORCA_EC2_SUBNETS,
    SPOT_INSTANCE_TYPE,
    SPOT_INTERRUPTION_BEHAVIOR,
)
from machines.runtime.errors import (
    CONNECTION,
    CREDENTIALS,
    NOT_THE_API,
    TIMEOUT,
    CloudError,
    InvalidMachineIdError,
)
from machines.runtime.labels import (
    ORCA_LABEL,
    ORCA_VALUE,
    OWNER_LABEL,
    POOL_LABEL,
    managed_by,
    whose,
)
from machines.runtime.models import Ending, Machine, Market, Status, machine_address
from machines.runtime.settings import ORCA_REQUEST_TIMEOUT
from machines.runtime.telemetry import BUSY, LOST_ANSWER, OK, REFUSED, SERVER_ERROR, THROTTLED
from machines.runtime.telemetry import NOT_THE_API as NOT_API

STATUSES: Mapping[str, Status] = {
    "pending": Status.STARTING,
    "running": Status.RUNNING,
    "stopping": Status.STOPPING,
    "stopped": Status.OFF,
    "shutting-down": Status.DELETING,
    "terminated": Status.DELETING,
}
"""EC2 instance states in the shared vocabulary; any other state is ``unknown``."""

LIVE_STATES = ("pending", "running", "stopping", "stopped")
"""States of an instance that holds its name: it runs or can be started again."""

LISTED_STATES = (*LIVE_STATES, "shutting-down")
"""States ``machines`` reports: all but terminated, which EC2 keeps listing for a while."""


SPOT_NO_STOCK_CODES = NO_STOCK_CODES | frozenset(
    {
        "SpotMaxPriceTooLow",
        "MaxSpotInstanceCountExceeded",
        "InsufficientCapacity",
        "UnfulfillableCapacity",
        "capacity-not-available",
        "capacity-oversubscribed",
        "price-too-low",
        "constraint-not-fulfillable",
    }
)
"""What a spot launch answers when there is no spot capacity for it now: EC2's capacity
codes, the spot price above the maximum, the account's spot instance quota spent, and the
spot request status codes EC2 may give as the error. Not now, not here: no stock, so a
``spot-then-on-demand`` pool launches on-demand instead."""

SPOT_INTERRUPTION = "Server.SpotInstanceTermination"
"""The state reason code of an instance EC2 took back from the spot market."""

SPOT_OPTIONS = {
    "MarketType": "spot",
    "SpotOptions": {
        "SpotInstanceType": SPOT_INSTANCE_TYPE,
        "InstanceInterruptionBehavior": SPOT_INTERRUPTION_BEHAVIOR,
    },
}
"""RunInstances' InstanceMarketOptions of a pool's spot machine (``settings``)."""


def no_stock_codes(market: Market) -> frozenset[str]:
    """The RunInstances error codes that mean no capacity of ``market`` now."""
    return SPOT_NO_STOCK_CODES if market == Market.SPOT else NO_STOCK_CODES


RETRY_CODES = frozenset(
    {
        "Throttling",
        "ThrottlingException",
        "ThrottledException",
        "RequestThrottledException",
        "TooManyRequestsException",
        "ProvisionedThroughputExceededException",
        "TransactionInProgressException",
        "RequestLimitExceeded",
        "BandwidthLimitExceeded",
        "LimitExceededException",
        "RequestThrottled",
        "SlowDown",
        "EC2ThrottledException",
        "RequestTimeout",
        "RequestTimeoutException",
        "PriorRequestNotComplete",
    }
)
"""EC2 error codes worth another try: botocore's throttling and transient codes."""

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

BOTO_ERRORS = (BotoCoreError, ClientError, ResponseParserError, ValidationError)
"""What boto3 raises for an answer that is an error or not EC2's, and what pydantic raises
for an answer of the wrong shape: ``cloud_error`` turns each into a ``CloudError``."""

INSTANCE_ID = re.compile(r"i-(?:[0-9a-f]{8}|[0-9a-f]{17})")


def instance_id_of(machine_id: object) -> str:
    """``machine_id`` when it is an EC2 instance id, else ``InvalidMachineIdError``."""
    if isinstance(machine_id, str) and INSTANCE_ID.fullmatch(machine_id):
        return machine_id
    raise InvalidMachineIdError(
        f"{machine_id!r} is not an EC2 instance id: expected i- and 8 or 17 hex digits"
    )


def status_of(ec2_state: str | None) -> Status:
    """The shared status for an EC2 instance state."""
    return STATUSES.get(ec2_state or "", Status.UNKNOWN)


class _Answer(BaseModel):
    """An answer's fields this package reads. Lists EC2 always sends (empty or not) are
    required: an answer without them (an HTML page parses to nothing) is not EC2's."""

    model_config = ConfigDict(frozen=True, extra="ignore")


class Tag(_Answer):
    key: str = Field(alias="Key")
    value: str = Field(alias="Value")


class State(_Answer):
    name: str = Field(alias="Name")


class StateReason(_Answer):
    code: str = Field(default="", alias="Code")


class Placement(_Answer):
    zone: str = Field(default="", alias="AvailabilityZone")


class Instance(_Answer):
    """The fields of an EC2 instance this package reads."""

    id: str = Field(alias="InstanceId")
    type: str = Field(alias="InstanceType")
    state: State = Field(alias="State")
    placement: Placement = Field(default_factory=Placement, alias="Placement")
    public_ip: str = Field(default="", alias="PublicIpAddress")
    private_ip: str = Field(default="", alias="PrivateIpAddress")
    tag_list: list[Tag] = Field(default_factory=list, alias="Tags")
    lifecycle: str = Field(default="", alias="InstanceLifecycle")
    state_reason: StateReason = Field(default_factory=StateReason, alias="StateReason")
    launched: datetime | None = Field(default=None, alias="LaunchTime")

    @property
    def market(self) -> Market:
        return Market.SPOT if self.lifecycle == "spot" else Market.ON_DEMAND

    @property
    def ending(self) -> Ending:
        """Why the instance goes: interrupted when EC2 says so, else deleted; none while
        it is not going."""
        if self.state.name not in ("shutting-down", "terminated"):
            return Ending.NONE
        if self.state_reason.code == SPOT_INTERRUPTION:
            return Ending.INTERRUPTED
        return Ending.DELETED

    @property
    def tags(self) -> dict[str, str]:
        return {tag.key: tag.value for tag in self.tag_list}


class Reservation(_Answer):
    instances: list[Instance] = Field(alias="Instances")


class InstancesPage(_Answer):
    reservations: list[Reservation] = Field(alias="Reservations")
    next_token: str = Field(default="", alias="NextToken")


class Processor(_Answer):
    architectures: list[str] = Field(default_factory=list, alias="SupportedArchitectures")


class InstanceType(_Answer):
    name: str = Field(alias="InstanceType")
    processor: Processor = Field(default_factory=Processor, alias="ProcessorInfo")


class InstanceTypes(_Answer):
    types: list[InstanceType] = Field(alias="InstanceTypes")


class Offering(_Answer):
    type: str = Field(alias="InstanceType")
    location: str = Field(alias="Location")


class Offerings(_Answer):
    """DescribeInstanceTypeOfferings' answer (one page: the filters keep it small)."""

    offerings: list[Offering] = Field(alias="InstanceTypeOfferings")


class ImageEbs(_Answer):
    size: int | None = Field(default=None, alias="VolumeSize")


class ImageDevice(_Answer):
    device: str = Field(alias="DeviceName")
    ebs: ImageEbs | None = Field(default=None, alias="Ebs")


class Image(_Answer):
    id: str = Field(alias="ImageId")
    name: str = Field(default="", alias="Name")
    created: datetime = Field(alias="CreationDate")
    architecture: str = Field(default="", alias="Architecture")
    root_device: str = Field(default="/dev/sda1", alias="RootDeviceName")
    devices: list[ImageDevice] = Field(default_factory=list, alias="BlockDeviceMappings")

    @property
    def root_size(self) -> int | None:
        """The GiB of the image's root snapshot, the least a root volume of it may have."""
        root = [d for d in self.devices if d.device == self.root_device and d.ebs is not None]
        return root[0].ebs.size if root and root[0].ebs is not None else None


class Images(_Answer):
    images: list[Image] = Field(alias="Images")


class SpotPrice(_Answer):
    type: str = Field(alias="InstanceType")
    zone: str = Field(alias="AvailabilityZone")
    price: Decimal = Field(alias="SpotPrice")
    at: datetime = Field(alias="Timestamp")


class SpotPrices(_Answer):
    """DescribeSpotPriceHistory's answer."""

    prices: list[SpotPrice] = Field(alias="SpotPriceHistory")
    next_token: str = Field(default="", alias="NextToken")


class QueueMessage(_Answer):
    """One message of SQS's ReceiveMessage answer."""

    id: str = Field(alias="MessageId")
    receipt: str = Field(alias="ReceiptHandle")
    body: str = Field(default="", alias="Body")


class QueueMessages(_Answer):
    """ReceiveMessage's answer: SQS leaves ``Messages`` out when the queue had none."""

    messages: list[QueueMessage] = Field(default_factory=list, alias="Messages")


class BatchFailure(_Answer):
    id: str = Field(alias="Id")
    code: str = Field(default="", alias="Code")


class DeletedMessages(_Answer):
    """DeleteMessageBatch's answer: the entries SQS could not delete (``Failed``)."""

    failed: list[BatchFailure] = Field(default_factory=list, alias="Failed")


class StateChange(_Answer):
    id: str = Field(alias="InstanceId")


class Terminating(_Answer):
    """TerminateInstances' answer: which instances are on their way out."""

    instances: list[StateChange] = Field(alias="TerminatingInstances")


NOTICE_TAG = "orca-notice"
"""The tag the provider writes on an autoscaler's instance EC2 gave a notice for
(``Ending``'s value: ``interrupting``, ``rebalance``, ``scheduled``), so every process that
lists the owner sees it (``clouds.ec2.notices``)."""
ENDS_AT_TAG = "orca-notice-ends-at"
"""Beside ``NOTICE_TAG``, when the notice says when the instance goes: ISO 8601, UTC."""


def notice_tags(ending: Ending, ends_at: datetime | None) -> dict[str, str]:
    """The tags that say an instance is under ``ending``'s notice until ``ends_at``."""
    tags = {NOTICE_TAG: ending.value}
    if ends_at is not None:
        tags[ENDS_AT_TAG] = ends_at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return tags


def notice_of(tags: Mapping[str, str]) -> tuple[Ending, datetime | None]:
    """The notice ``notice_tags`` wrote in ``tags``: (``Ending.NONE``, None) when there is
    none, or when it is not one of ours (a value no ``Ending`` notice has)."""
    try:
        ending = Ending(tags.get(NOTICE_TAG, ""))
    except ValueError:
        return Ending.NONE, None
    if not ending.notice:
        return Ending.NONE, None
    try:
        ends_at = datetime.fromisoformat(tags[ENDS_AT_TAG]).astimezone(UTC)
    except (KeyError, ValueError):
        ends_at = None
    return ending, ends_at


def machine(instance: Instance, tags: Mapping[str, str] | None = None) -> Machine:
    """The shared ``Machine`` of an instance; ``tags`` replace the instance's when given.
    A running instance the provider tagged with a notice (``NOTICE_TAG``) carries it."""
    labels = instance.tags if tags is None else tags
    ending, ends_at = instance.ending, None
    if ending == Ending.NONE:
        ending, ends_at = notice_of(labels)
    return Machine(
        id=instance.id,
        name=labels.get(NAME_TAG, ""),
        status=status_of(instance.state.name),
        machine_type=instance.type,
        location=instance.placement.zone,
        address=machine_address(instance.public_ip, instance.private_ip),
        pool=labels.get(POOL_LABEL, ""),
        managed_by=managed_by(labels),
        market=instance.market,
        ending=ending,
        ends_at=ends_at,
        created=instance.launched,
    )


def retry_after(error: Exception) -> float | None:
    """None when ``error`` is final, else 0 (EC2 never says how long to wait).

    Throttling, transient codes, 5xx answers and lost answers are tried again (a launch
    looks for its instance before it resends RunInstances). No stock is final although EC2
    sends it with a 5xx status: the autoscaler should hear it now and try elsewhere.
    """
    if isinstance(error, ClientError):
        code = str(error.response.get("Error", {}).get("Code", ""))
        status = int(error.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0) or 0)
        if code in SPOT_NO_STOCK_CODES:
            return None
        return 0.0 if code in RETRY_CODES or status >= 500 else None
    if isinstance(error, HTTPClientError | NoConnectionError):
        return 0.0
    return None


THROTTLING_CODES = RETRY_CODES - {
    "TransactionInProgressException",
    "RequestTimeout",
    "RequestTimeoutException",
    "PriorRequestNotComplete",
}
"""The retried codes that say the account's request rate is spent (the rest: busy)."""


def outcome(error: Exception | None) -> str:  # noqa: PLR0911 (one per kind)
    """What one try came to, for ``machines.runtime.telemetry``."""
    if error is None:
        return OK
    if isinstance(error, ClientError):
        code = str(error.response.get("Error", {}).get("Code", ""))
        status = int(error.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0) or 0)
        if code in THROTTLING_CODES:
            return THROTTLED
        if code in RETRY_CODES:
            return BUSY
        return SERVER_ERROR if status >= 500 and code not in NO_STOCK_CODES else REFUSED
    if isinstance(error, HTTPClientError | NoConnectionError):
        return LOST_ANSWER
    if isinstance(error, ResponseParserError | ValidationError):
        return NOT_API
    if isinstance(error, CloudError) and (error.code == NOT_THE_API or error.code.isdigit()):
        return NOT_API  # a page where an answer was expected (``cloud_error``)
    return REFUSED


def cloud_error(  # noqa: PLR0911 (one answer per kind of failure)
    where: str, operation: str, error: Exception, attempts: int
) -> CloudError:
    """The package's error for what boto3 raised: EC2's code, or why no answer came.

    Messages carry the operation, codes and EC2's message, never parameters (user data)
    nor a botocore traceback.
    """
    tries = f" (after {attempts} tries)" if attempts > 1 else ""
    if isinstance(error, CloudError):
        return error
    if isinstance(error, ClientError) and without_aws_error(error):
        status = http_status(error)
        return CloudError(
            f"{where} answered HTTP {status}{tries}, {error_message(error)}: not the API's "
            f"answer (is {AWS_ENDPOINT_URL} an AWS endpoint?)",
            code=str(status) if status >= 500 else NOT_THE_API,
        )
    if isinstance(error, ClientError):
        detail = error.response.get("Error", {})
        code = str(detail.get("Code", "")) or "Unknown"
        message = str(detail.get("Message", "")).strip()
        return CloudError(
            f"{where} was refused{tries}: {code}: {message or 'no message'}"
            f"{hint(code, operation, message)}",
            code=code,
        )
    if isinstance(error, ReadTimeoutError | ConnectTimeoutError):
        return CloudError(
            f"{where} did not answer in time{tries} ({ORCA_REQUEST_TIMEOUT})", code=TIMEOUT
        )
    if isinstance(error, NoConnectionError | HTTPClientError):
        return CloudError(
            f"{where} could not be reached{tries} ({type(error).__name__}): check the network, "
            f"{AWS_REGION} and {AWS_ENDPOINT_URL}",
            code=CONNECTION,
        )
    if isinstance(error, NoCredentialsError):
        return CloudError(
            f"{where}: no AWS credentials found: set {AWS_ACCESS_KEY_ID} and "
            f"{AWS_SECRET_ACCESS_KEY}, {AWS_PROFILE}, or give the machine a role",
            code=CREDENTIALS,
        )
    if isinstance(error, ResponseParserError | ValidationError):
        return CloudError(
            f"{where} answered something that is not EC2's: is {AWS_ENDPOINT_URL} an EC2 endpoint?",
            code=NOT_THE_API,
        )
    if isinstance(error, BotoCoreError):
        return CloudError(
            f"{where} failed in the AWS client: {type(error).__name__}",
            code=type(error).__name__,
        )
    raise error


def http_status(error: ClientError) -> int:
    """The HTTP status of the answer that carried ``error``."""
    return int(error.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0) or 0)


def error_message(error: ClientError) -> str:
    """The message of ``error``'s answer (``client`` has described one that is no AWS
    error's rather than quote it)."""
    return str(error.response.get("Error", {}).get("Message", "")).strip()


def without_aws_error(error: ClientError) -> bool:
    """Whether ``error``'s answer carried no AWS error code (a web page, a proxy's answer):
    botocore then gives the HTTP status as the code."""
    code = str(error.response.get("Error", {}).get("Code", "") or "")
    return code in ("", str(http_status(error)))


_SETTING_OF_CODE = (
    ("InvalidGroup", ORCA_EC2_SECURITY_GROUP),
    ("InvalidSubnet", ORCA_EC2_SUBNETS),
    ("InvalidAMIID", ORCA_EC2_IMAGE),
)
"""Prefixes of EC2 error codes about a resource named in a setting, and that setting."""


def hint(code: str, operation: str, message: str) -> str:
    """What to do about an EC2 error, for its message; empty when EC2's says enough."""
    setting = next((name for prefix, name in _SETTING_OF_CODE if code.startswith(prefix)), "")
    if not setting and re.search("instance ?profile", message, re.IGNORECASE):
        setting = ORCA_EC2_INSTANCE_PROFILE
    if setting:
        return f": check {setting}"
    if code.isdigit():
        return f" (is {AWS_ENDPOINT_URL} an EC2 endpoint?)"
    hints = {
        **dict.fromkeys(
            CREDENTIAL_CODES,
            f": check the credentials ({AWS_ACCESS_KEY_ID} and {AWS_SECRET_ACCESS_KEY}, "
            f"{AWS_SESSION_TOKEN}, {AWS_PROFILE} or the machine's role)",
        ),
        "RequestExpired": ": check this machine's clock",
        "UnauthorizedOperation": (
            f": the credentials may not call ec2:{operation}; allow it in their IAM policy"
        ),
    }
    return hints.get(code, "")


def describe(tags: Mapping[str, str]) -> str:
    """Whose instance the tags say it is, for messages."""
    if tags.get(ORCA_LABEL) != ORCA_VALUE:
        return "which is not an orca pool machine"
    return f"of pool {tags.get(POOL_LABEL, '')!r} and {whose(tags.get(OWNER_LABEL, ''))}"
