"""boto3 set up for the provider: its own session, no retries of its own, quiet about secrets.

botocore logs request parameters and headers at DEBUG: the AWS libraries' loggers get the
package's ``RedactSecrets`` filter when a client is made, so user data and credentials never
reach a log. An error answer without an AWS error in it (a proxy's or a stand-in's web page)
is described, never quoted: botocore would make its whole body the error's message. Every
timestamp of an answer is read as an aware datetime in UTC (``utc_timestamp``), whatever the
host's time zone.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any

import boto3.session
import botocore.session
from botocore.config import Config
from botocore.exceptions import ConnectionClosedError, ReadTimeoutError

from machines.runtime import deadline, telemetry
from machines.runtime.clouds.ec2.settings import (
    AWS_ACCESS_KEY_ID,
    AWS_PROFILE,
    AWS_SECRET_ACCESS_KEY,
    AWS_SESSION_TOKEN,
    Ec2Settings,
)
from machines.runtime.secrets import redact_logs
from machines.runtime.settings import Timeouts

POOL_CONNECTIONS = 32

_ACTION = re.compile(rb"(?:^|&)Action=([A-Za-z0-9]+)")

CREDENTIAL_VARIABLES = {
    AWS_ACCESS_KEY_ID: "aws_access_key_id",
    AWS_SECRET_ACCESS_KEY: "aws_secret_access_key",
    AWS_SESSION_TOKEN: "aws_session_token",
    AWS_PROFILE: "profile_name",
}
"""Variables that may carry credentials, and boto3's name for each."""

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
"""Loggers of the AWS libraries that may log a request's parameters, headers or answer."""


PRICING_REGION = "us-east-1"
"""A region serving the AWS Price List Query API (it serves every region's prices)."""


def client(settings: Ec2Settings, credentials: Mapping[str, str] | None) -> Any:
    """An EC2 client from its own session (sessions are not thread-safe, clients are).

    botocore gets one try per request: ``machines.runtime.retry`` retries, within the call's time,
    as it does for every cloud. ``credentials`` may hold the ``CREDENTIAL_VARIABLES``; what
    it lacks, boto3's default chain finds.
    """
    return _client("ec2", settings.region, settings, credentials)


def pricing_client(settings: Ec2Settings, credentials: Mapping[str, str] | None) -> Any:
    """A client of AWS's Price List Query API (``pricing``) in ``PRICING_REGION``, set up as
    ``client`` is: the same credentials, one try per request, the call's deadline; at
    ``AWS_ENDPOINT_URL`` when that is set (boto3's meaning: every service's endpoint)."""
    return _client("pricing", PRICING_REGION, settings, credentials)


def kms_client(settings: Ec2Settings, credentials: Mapping[str, str] | None) -> Any:
    """A KMS client in the stack's region, set up as ``client`` is (the same endpoint when
    ``AWS_ENDPOINT_URL`` is set): what a root volume's ``kmsKey`` is looked up with."""
    return _client("kms", settings.region, settings, credentials)


def sqs_client(settings: Ec2Settings, credentials: Mapping[str, str] | None) -> Any:
    """An SQS client in the stack's region, set up as ``client`` is (the same endpoint when
    ``AWS_ENDPOINT_URL`` is set): what the queue of EC2's notices is read with."""
    return _client("sqs", settings.region, settings, credentials)


def _client(
    service: str, region: str, settings: Ec2Settings, credentials: Mapping[str, str] | None
) -> Any:
    redact_logs(AWS_LOGGERS)
    given = credentials or {}
    session = boto3.session.Session(
        botocore_session=_botocore_session(),
        region_name=region,
        **{arg: given[name] for name, arg in CREDENTIAL_VARIABLES.items() if given.get(name)},
    )
    made = session.client(
        service,
        region_name=region,
        endpoint_url=settings.endpoint_url or None,
        config=_config(settings.timeouts),
    )
    made.meta.events.register("after-call", _describe_foreign_error)
    # botocore offers no switch for this; a test pins that the attribute exists.
    http = made._endpoint.http_session
    http.send = functools.partial(_send_within_deadline, http.send, settings.timeouts.request)
    return made


NO_AWS_ERROR = "an answer without an AWS error"
"""How an error answer that carries no AWS error code begins its message (``answers``
reads it)."""


def _describe_foreign_error(http_response: Any, parsed: Any, **_: Any) -> None:
    """An error answer without an AWS error code (botocore then takes the HTTP status as
    the code and the body, a web page as often as not, as the message) gets a message that
    says what came instead of quoting it: the page stays out of every message and log."""
    status = getattr(http_response, "status_code", 0)
    error = parsed.get("Error") if isinstance(parsed, dict) else None
    if status < 300 or not isinstance(error, dict):
        return
    if str(error.get("Code") or status) != str(status):
        return
    kind = http_response.headers.get("Content-Type", "") or "no Content-Type"
    size = len(http_response.content or b"")
    error["Message"] = f"{NO_AWS_ERROR} ({kind.split(';')[0]}, {size} bytes)"


def action(body: object, target: object = None) -> str:
    """The action of a request: of its form body (EC2's ``DescribeInstances``), else of its
    ``X-Amz-Target`` header (the JSON services', ``AWSPriceListService.GetProducts``), else
    ``unknown``."""
    raw = body.encode() if isinstance(body, str) else body
    found = _ACTION.search(raw) if isinstance(raw, bytes) else None
    if found:
        return found.group(1).decode()
    named = target.decode() if isinstance(target, bytes) else target
    if isinstance(named, str) and "." in named:
        return named.rpartition(".")[2]
    return "unknown"


def _send_within_deadline(send: Any, request_timeout: float, request: Any) -> Any:
    """botocore's send held to the call's deadline (``machines.runtime.deadline``): the read timeout
    is cut to the time left and the body is read within it, not one socket read at a time.
    Each request is timed and traced (``machines.runtime.telemetry.http_request``)."""
    target = request.headers.get("X-Amz-Target")
    name = action(request.body, target)
    service = _service(target)
    with telemetry.http_request(
        "ec2",
        request.method,
        request.url,
        name,
        span_name=f"{service}.{name}",
        rpc={
            telemetry.RPC_SYSTEM: "aws-api",
            telemetry.RPC_SERVICE: service,
            telemetry.RPC_METHOD: name,
        },
    ) as traced:
        response = _send_bounded(send, request_timeout, request)
        traced.answered(response.status_code)
        return response


JSON_SERVICES = {"AWSPriceListService": "Pricing", "TrentService": "KMS", "AmazonSQS": "SQS"}
"""The services the provider asks through AWS's JSON protocol, by the prefix of their
``X-Amz-Target`` header, as traces name them."""


def _service(target: object) -> str:
    """The service of a request, as its span is named: EC2 for a form body (no
    ``X-Amz-Target``), else the JSON service its target's prefix names."""
    if target is None:
        return "EC2"
    named = target.decode() if isinstance(target, bytes) else str(target)
    prefix = named.partition(".")[0]
    return JSON_SERVICES.get(prefix, prefix)


def _send_bounded(send: Any, request_timeout: float, request: Any) -> Any:
    request.context["read_timeout"] = deadline.timeout(request_timeout)
    wanted_stream = request.stream_output
    request.stream_output = True
    response = send(request)
    if not wanted_stream:
        try:
            response._content = deadline.read_body(response.raw, request_timeout, decode=False)
        except deadline.BodyTimeout as error:
            raise ReadTimeoutError(endpoint_url=request.url, error=error) from None
        except Exception as error:
            raise ConnectionClosedError(
                error=error, request=request, endpoint_url=request.url
            ) from None
    return response


def _botocore_session() -> Any:
    """A new botocore session that shares the process's loader of botocore's JSON models and
    reads every timestamp in UTC (``utc_timestamp``)."""
    session = botocore.session.Session()
    session.register_component("data_loader", _shared_loader())
    session.get_component("response_parser_factory").set_parser_defaults(
        timestamp_parser=utc_timestamp
    )
    return session


def utc_timestamp(value: object) -> datetime:
    """An AWS answer's timestamp (EC2's ``LaunchTime``: ISO 8601 ending in ``Z``; the JSON
    services' epoch seconds; RFC 822 dates) as an aware datetime in UTC. botocore's own
    parser reads epoch seconds in the host's time zone and, through dateutil, takes ``Z``
    for the host's zone whenever that zone is named UTC, whatever its offset (``TZ=UTC-3``:
    three hours off); ``created`` and paid time are UTC on every cloud. A time without a zone
    is UTC, as AWS writes its times."""
    if isinstance(value, int | float):
        return datetime.fromtimestamp(value, UTC)
    text = str(value).strip()
    try:
        return datetime.fromtimestamp(float(text), UTC)
    except ValueError:
        pass
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        parsed = parsedate_to_datetime(text)
    return parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed.astimezone(UTC)


@functools.cache
def _shared_loader() -> Any:
    """botocore's model loader, made once: a session would otherwise parse megabytes of JSON
    again, a tenth of a second per provider. It only reads files and caches what it read."""
    return botocore.session.Session().get_component("data_loader")


def _config(timeouts: Timeouts) -> Config:
    """Timeouts of each request, and one try (``total_max_attempts`` counts the first)."""
    return Config(
        retries={"mode": "standard", "total_max_attempts": 1},
        connect_timeout=timeouts.request,
        read_timeout=timeouts.request,
        max_pool_connections=POOL_CONNECTIONS,
    )
