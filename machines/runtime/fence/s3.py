"""``s3://bucket/prefix?region=...&endpoint=...``: the fence's objects in S3, or in any store
that speaks its API and honours its conditional writes.

A step is a ``GetObject`` (its ETag) and a ``PutObject`` with ``If-Match`` that ETag, or
``If-None-Match: *`` for an object not written yet: S3 refuses it (412 ``PreconditionFailed``,
or 409 ``ConditionalRequestConflict`` while another conditional write races it) when another
process wrote first, and the step is read and decided again (Terraform 1.10's S3 backend
locks state so, ``use_lockfile``). A store that ignores the preconditions would fence
nothing, so the first step probes it: a second ``If-None-Match: *`` write of one key and an
``If-Match`` of a made-up ETag must both be refused, else the store is refused in one line.

The URL's query takes Pulumi's S3 backend options (gocloud.dev's): ``region``,
``endpoint`` (``host:port`` is https unless ``disableSSL=true``), ``s3ForcePathStyle`` (or
``use_path_style``), ``profile``, and ``awssdk``, ``dualstack``, ``fips``, taken as given.
Credentials come from the environment the provider reads, as boto3 finds them; the
permissions needed are ``s3:GetObject`` and ``s3:PutObject`` on the prefix.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Mapping
from typing import Any, TypeVar
from urllib.parse import parse_qs, urlsplit

import boto3
from botocore.config import Config
from botocore.credentials import EnvProvider
from botocore.exceptions import BotoCoreError, ClientError

from machines.runtime import retry
from machines.runtime.backoff import backoff
from machines.runtime.errors import FenceError, SettingsError
from machines.runtime.fence.held import Held
from machines.runtime.fence.store import FOLDER, Decide, Store
from machines.runtime.secrets import mask

T = TypeVar("T")

OPTIONS = frozenset(
    {"region", "endpoint", "disableSSL", "s3ForcePathStyle", "use_path_style", "profile",
     "awssdk", "dualstack", "fips"}
)  # fmt: skip
"""The query options of an ``s3://`` URL (Pulumi's S3 backend's, gocloud.dev's)."""

LOST_RACE = frozenset({"PreconditionFailed", "ConditionalRequestConflict", "412", "409"})
"""What S3 answers a conditional write when another process wrote (or is writing) first."""

NOT_THERE = frozenset({"NoSuchKey", "404"})

PROBE_KEY = "probe"
"""The object the probe writes (once per store, never deleted: no ``s3:DeleteObject``)."""

REQUEST_TIMEOUT = 10.0
"""Seconds one request to the store may take (the call's deadline bounds all of them)."""


class S3Store(Store):
    """The objects under ``prefix`` of ``bucket``: ``<prefix>/<owner>/<pool>.json``."""

    def __init__(self, url: str, environ: Mapping[str, str], variable: str) -> None:
        """``url`` as ``variable`` gives it; the objects go under its path's ``FOLDER``."""
        super().__init__()
        shown = f"{variable}={mask(url)}"
        parts = urlsplit(url)
        query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
        unknown = sorted(set(query) - OPTIONS)
        if unknown:
            raise SettingsError(
                f"{shown} has option {unknown[0]!r}, which an s3:// URL does not take: use "
                f"{', '.join(sorted(OPTIONS))}"
            )
        if not parts.netloc:
            raise SettingsError(f"{shown} names no bucket: write s3://bucket/prefix?region=...")
        region = query.get("region", "")
        if not region:
            raise SettingsError(
                f"{shown} names no region: add ?region=eu-central-1 (the bucket's), as a "
                "Pulumi S3 backend URL does"
            )
        self.bucket = parts.netloc
        self.prefix = "/".join(p for p in (parts.path.strip("/"), FOLDER) if p)
        self.where = f"s3://{self.bucket}/{self.prefix}".rstrip("/")
        self._region = region
        self._endpoint = _endpoint(query)
        self._path_style = "true" in (query.get("s3ForcePathStyle"), query.get("use_path_style"))
        self._profile = query.get("profile") or None
        self._environ = dict(environ)
        self._client: Any = None
        self._probed: str | None = None
        """The probe's answer: None before it, else why the store cannot fence (empty: it
        can)."""

    def transact(self, key: str, decide: Decide[T], deadline: float) -> T:
        start = time.monotonic()
        self._check()
        name = self._key(key)
        attempt = 0
        while True:
            raw, etag = self._get(name, deadline)
            new, answer = decide(Held.read(raw, f"s3://{self.bucket}/{name}"))
            if new is None:
                return answer
            if self._put(name, new.dump(), etag, deadline):
                if attempt:
                    self.counts.add(seconds=time.monotonic() - start)
                return answer
            self.counts.add(lost=1)
            left = deadline - (time.monotonic() - start)
            if left <= 0:
                raise FenceError(
                    f"the fence at {self.where} was written by other processes at every try "
                    f"for {deadline:.0f} s (ORCA_CALL_TIMEOUT): nothing was made; try again"
                )
            time.sleep(min(backoff(attempt, 0.01, 0.5), left))
            attempt += 1

    def probe(self) -> str:
        """Why the store cannot fence, empty when it can: a second ``If-None-Match: *``
        write and an ``If-Match`` of a made-up ETag must both be refused, since a store that
        takes either would let two processes both write. ``FenceError`` when it cannot be
        asked."""
        name = self._key(PROBE_KEY)
        deadline = REQUEST_TIMEOUT * 3
        body = f'{{"probe": "{uuid.uuid4()}"}}'.encode()
        self._put(name, body, None, deadline, probe=True)  # now, or by an earlier probe
        again = self._put(name, body, None, deadline, probe=True)
        made_up = self._put(name, body, '"0123456789abcdef0123456789abcdef"', deadline, probe=True)
        if not (again or made_up):
            return ""
        which = "If-None-Match: *" if again else "If-Match"
        return (
            f"the fence at {self.where} does not honour conditional writes (it took a "
            f"second PutObject with {which}), so it cannot keep a pool's max across "
            "processes: use S3, or a store that honours If-None-Match and If-Match on "
            "PutObject, or file:// for processes on one host"
        )

    def _check(self) -> None:
        """The probe, once: its answer is kept (a store that cannot be asked is probed again
        at the next create), so a store that cannot fence is refused at every create without
        writing again."""
        if self._probed is None:
            self._probed = self.probe()
        if self._probed:
            raise FenceError(self._probed)

    def _key(self, key: str) -> str:
        return f"{self.prefix}/{key}" if self.prefix else key

    def _s3(self) -> Any:
        if self._client is None:
            found = EnvProvider(environ=self._environ).load()
            given: dict[str, Any] = {}
            if found is not None:
                frozen = found.get_frozen_credentials()
                given = {
                    "aws_access_key_id": frozen.access_key,
                    "aws_secret_access_key": frozen.secret_key,
                    "aws_session_token": frozen.token,
                }
            session = boto3.session.Session(
                region_name=self._region,
                profile_name=None if given else self._profile,
                **given,
            )
            self._client = session.client(
                "s3",
                region_name=self._region,
                endpoint_url=self._endpoint,
                config=Config(
                    s3={"addressing_style": "path" if self._path_style else "auto"},
                    retries={"max_attempts": 1},
                    connect_timeout=REQUEST_TIMEOUT,
                    read_timeout=REQUEST_TIMEOUT,
                ),
            )
        return self._client

    def _get(self, name: str, deadline: float) -> tuple[bytes | None, str | None]:
        """The object and its ETag; (None, None) when it was never written."""

        def get() -> tuple[bytes | None, str | None]:
            try:
                answer = self._s3().get_object(Bucket=self.bucket, Key=name)
            except ClientError as error:
                if _code(error) in NOT_THERE:
                    return None, None
                raise
            return answer["Body"].read(), str(answer["ETag"])

        self.counts.add(reads=1)
        return self._call(f"GetObject {name}", get, deadline, "s3:GetObject")

    def _put(
        self, name: str, body: bytes, etag: str | None, deadline: float, *, probe: bool = False
    ) -> bool:
        """Write ``body`` if the object is still at ``etag`` (None: not written yet);
        False when another write came first."""
        condition = {"IfMatch": etag} if etag else {"IfNoneMatch": "*"}

        def put() -> bool:
            try:
                self._s3().put_object(
                    Bucket=self.bucket,
                    Key=name,
                    Body=body,
                    ContentType="application/json",
                    **condition,
                )
            except ClientError as error:
                if _code(error) in LOST_RACE:
                    return False
                raise
            return True

        if probe:
            self.counts.add(probes=1)
        else:
            self.counts.add(writes=1)
        return self._call(f"PutObject {name}", put, deadline, "s3:PutObject")

    def _call(self, what: str, request: Callable[[], T], deadline: float, permission: str) -> T:
        try:
            return retry.call(request, _retry_after, deadline=deadline, what=what)
        except retry.GaveUp as gave_up:
            raise FenceError(
                f"the fence at {self.where} could not be reached ({what}: {gave_up.last}): "
                "nothing was made; try again"
            ) from None
        except ClientError as error:
            raise FenceError(
                f"the fence at {self.where} refused {what}: {_code(error)}: "
                f"{error.response.get('Error', {}).get('Message', '')}; the processes that "
                f"create need {permission} on s3://{self.bucket}/{self.prefix}*"
            ) from None
        except BotoCoreError as error:
            raise FenceError(f"the fence at {self.where} could not be asked ({error})") from None


def _endpoint(query: Mapping[str, str]) -> str | None:
    """The endpoint option as a URL (``host:port`` is https unless ``disableSSL=true``)."""
    endpoint = query.get("endpoint", "")
    if not endpoint or "://" in endpoint:
        return endpoint or None
    scheme = "http" if query.get("disableSSL") == "true" else "https"
    return f"{scheme}://{endpoint}"


def _code(error: ClientError) -> str:
    detail = error.response.get("Error", {})
    code = str(detail.get("Code", ""))
    status = str(error.response.get("ResponseMetadata", {}).get("HTTPStatusCode", ""))
    return code or status


def _retry_after(error: Exception) -> float | None:
    """Connection trouble, throttling and 5xx are tried again; the rest is final."""
    if isinstance(error, ClientError):
        status = int(error.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0) or 0)
        return 0.0 if status >= 500 or _code(error) in {"SlowDown", "RequestTimeout"} else None
    return 0.0 if isinstance(error, BotoCoreError) else None
