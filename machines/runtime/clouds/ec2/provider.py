"""EC2 instances for the autoscaler, behind the same ``Provider`` API as Hetzner.

A pool machine is an instance tagged at launch with the pool's labels and ``Name``. EC2
names are not unique, so ``create`` keeps one live instance per name itself: it looks
before it launches (``Provider.create`` runs one create of a name at a time). Each ``create``
sends its own ClientToken, so EC2 makes at most one instance for all retries of that call;
after a lost answer ``create`` also looks for the instance before it sends RunInstances
again, so an endpoint that ignores the token (moto) makes one too.

Retries are ``machines.runtime.retry``'s, as on every cloud: throttling and transient codes, 5xx
and lost answers, with jittered backoff within the call's time (``ORCA_CALL_TIMEOUT``).

``machines(pool)`` answers every pool from one listing of the owner while it is fresh
(``machines.runtime.listing``); what EC2 sells (types, the zones offering them, AMIs) is
its ``catalogue.py``, asked once and kept; ``offers`` gives the catalogue's zones for a type
less those a recent ``no_stock`` answer is remembered for (``machines.runtime.shortages``).
``prices`` asks AWS's Price List and EC2's spot price history through the same calls
(``prices.py``). EC2 states no request budget in its answers, so the window is
``ORCA_LIST_TTL`` as set.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections.abc import Callable, Collection, Mapping, Sequence
from functools import partial
from typing import Any, ClassVar, TypeVar

from botocore.exceptions import (
    HTTPClientError,
    ReadTimeoutError,
)

from machines.runtime import retry, telemetry
from machines.runtime.billing import Billing
from machines.runtime.clock import Clock
from machines.runtime.clouds.ec2.answers import (
    BOTO_ERRORS,
    LISTED_STATES,
    LIVE_STATES,
    SPOT_INTERRUPTION,
    SPOT_OPTIONS,
    DeletedMessages,
    Instance,
    InstancesPage,
    QueueMessage,
    QueueMessages,
    Reservation,
    Terminating,
    cloud_error,
    describe,
    instance_id_of,
    machine,
    no_stock_codes,
    outcome,
    retry_after,
)
from machines.runtime.clouds.ec2.billing import BILLING
from machines.runtime.clouds.ec2.catalogue import Catalogue
from machines.runtime.clouds.ec2.client import (
    CREDENTIAL_VARIABLES,
    PRICING_REGION,
    client,
    kms_client,
    pricing_client,
    sqs_client,
)
from machines.runtime.clouds.ec2.machine import Launch, launch, run_instances, too_small
from machines.runtime.clouds.ec2.notices import Notices
from machines.runtime.clouds.ec2.options import Ec2Options
from machines.runtime.clouds.ec2.prices import Ec2Prices
from machines.runtime.clouds.ec2.settings import (
    ACCOUNT_LIMIT_CODES,
    CLOUD,
    MARKETS,
    NAME_TAG,
    ORCA_EC2_IMAGE,
    ORCA_EC2_SUBNETS,
    Ec2Settings,
)
from machines.runtime.errors import (
    NOT_THE_API,
    AccountFullError,
    CloudError,
    LostCreateError,
    MachinesError,
    UnknownMachineTypeError,
)
from machines.runtime.labels import (
    ORCA_LABEL,
    ORCA_VALUE,
    OWNER_LABEL,
    POOL_LABEL,
    belongs_to,
    not_ours,
    owner_among,
    pool_labels,
    whose,
)
from machines.runtime.models import Created, Ending, Machine, MachineSpec, Market, mismatch
from machines.runtime.pool import Pool
from machines.runtime.prices import PriceList
from machines.runtime.provider import Found, Provider
from machines.runtime.secrets import digest

T = TypeVar("T")

log = logging.getLogger(__name__)

MAX_RESULTS = 1000
"""Page size of ``DescribeInstances`` (EC2 takes 5 to 1000); tests lower it to see pages."""

_LOST = (ReadTimeoutError, HTTPClientError)
"""What botocore raises for a request that was sent and whose answer was lost (a connection
that was never made, ``ConnectTimeoutError`` or ``EndpointConnectionError``, sent nothing)."""


NO_BUDGET = (
    "EC2 states no request budget in its answers (its throttling buckets are per account and "
    "action, and only a throttled answer shows one is empty): the listing's window is "
    "ORCA_LIST_TTL as set"
)


class Ec2Provider(Provider):
    """EC2 instances of one account and region for one owner; safe to share between threads.

    ``image`` is ``ORCA_EC2_IMAGE``, or empty for Canonical's newest Ubuntu 24.04 LTS image
    of each type's architecture.
    """

    kind: ClassVar[str] = "ec2"
    cloud: ClassVar[str] = CLOUD
    markets: ClassVar[frozenset[Market]] = MARKETS
    offers_stock: ClassVar[bool] = False
    noun: ClassVar[str] = "instance"
    label_word: ClassVar[str] = "tag"
    billing: ClassVar[Billing | None] = BILLING
    budget_note: ClassVar[str] = NO_BUDGET

    def __init__(
        self,
        settings: Ec2Settings,
        owner: str = "",
        *,
        credentials: Mapping[str, str] | None = None,
        clock: Clock = time.time,
    ) -> None:
        """Build the provider from its settings; ``credentials`` as ``client.client`` takes;
        ``clock`` times the listing and the stock memory (tests pass theirs)."""
        super().__init__(owner, settings.image, settings.freshness, clock)
        self.region = settings.region
        self.subnets: Mapping[str, str] = dict(settings.subnets)
        self.security_group = settings.security_group
        self.firewall = settings.security_group
        """EC2's firewall is the security group; its ``ssh_keys`` stay empty: instances get
        no key pair, their SSH keys come in ``user_data`` (cloud-init)."""
        self.instance_profile = settings.instance_profile
        self._timeouts = settings.timeouts
        self._settings = settings
        self._credentials = credentials
        self._client = client(settings, credentials)
        self._pricing: Any = None
        self._pricing_lock = threading.Lock()
        self._kms: Any = None
        self._kms_keys: dict[str, str] = {}
        self._sqs: Any = None
        self._endpoint: str = self._client.meta.endpoint_url
        self.events_queue = settings.events_queue
        """``ORCA_EC2_EVENTS_QUEUE``: the queue of EC2's notices the listing reads, or empty."""
        self._notices = Notices(
            settings.events_queue,
            self._receive_notices,
            self._delete_notices,
            self._tag_notices,
            self._noticed,
            clock,
        )
        self.catalogue = Catalogue(
            self._call,
            self._client,
            region=settings.region,
            zones=list(self.subnets),
            image=settings.image,
            clock=clock,
            offers_ttl=settings.freshness.offers_ttl,
        )

    @classmethod
    def from_env(cls, owner: str = "", environ: Mapping[str, str] | None = None) -> Ec2Provider:
        """The provider of ``Ec2Settings.from_env(environ)``, with credentials from
        ``environ`` when it has them, else from boto3's default chain."""
        return cls(Ec2Settings.from_env(environ), owner, credentials=environ)

    def arch(self, machine_type: str) -> str:
        """Docker's architecture of an instance type, asked of EC2 once per type."""
        return self.catalogue.arch(machine_type)

    def _create(self, spec: MachineSpec) -> Created:
        """Launch one instance for ``spec``, or return the live one of that name already made.

        EC2's refusals come back as ``no_stock`` or ``failed``, and so does a call EC2 never
        answered; when RunInstances lost its answer, ``reason`` says the instance may exist
        all the same. ``Provider.create`` runs one create of a name at a time.
        """
        subnet = self.subnets.get(spec.location)
        if subnet is None:
            return Created.failure(self._no_subnet(spec.location))
        wanted = self.market(spec.pool).tries
        skipped = {m: self._passed(spec, m) for m in wanted}
        tries = [m for m in wanted if not skipped[m]]
        if not tries:
            return Created.out_of_stock("; ".join(skipped.values()))
        for market in wanted:
            if skipped[market]:
                log.info("%s; launching %r %s", skipped[market], spec.name, tries[0])
        return self._launch_named(spec, subnet, tries)

    def _passed(self, spec: MachineSpec, market: Market) -> str:
        """Why ``spec`` is not launched in ``market`` now without asking: no stock there,
        or the account's quota of that market, remembered; empty when it may be."""
        if self._stock.seconds_left(spec.machine_type, spec.location, market) > 0:
            return self._stock.reason("EC2", spec.machine_type, spec.location, market=market)
        return self.account_full([market])

    def offers(self, machine_type: str, pool: str = "") -> list[str]:
        """Zones with a subnet in the settings where EC2 offers ``machine_type``, by
        DescribeInstanceTypeOfferings (one request per type and ``ORCA_OFFERS_TTL``), less
        those a recent ``no_stock`` answer is remembered for. EC2 says where a type is
        offered, not whether it has capacity now: the memory of ``no_stock`` is the rest,
        per market: ``pool``'s (on-demand when empty; both for spot-then-on-demand); none
        while the account is remembered at its quota in every market the pool buys."""
        self.arch(machine_type)
        zones = self.catalogue.offered(machine_type)
        markets = self.market(pool).tries
        if self.account_full(markets):
            return []
        short = self._stock.short(machine_type, zones, markets)
        return [zone for zone in zones if zone not in short]

    def sells(self, machine_type: str, location: str) -> str | None:
        """A zone of ``ORCA_EC2_SUBNETS``, a type EC2 has (DescribeInstanceTypes, cached) and
        offers there (DescribeInstanceTypeOfferings)."""
        if location not in self.subnets:
            return self._no_subnet(location)
        try:
            self.arch(machine_type)
        except UnknownMachineTypeError as error:
            return str(error)
        zones = self.catalogue.offered_now(machine_type)
        if location not in zones:
            where = ", ".join(zones) or "none of the zones of the stack's subnets"
            return f"EC2 does not offer {machine_type} in {location}: it is offered in {where}"
        return None

    def account(self) -> tuple[str, ...]:
        """The region, the endpoint and a digest of the credentials given (boto3's default
        chain when none are: the same for every provider of this process)."""
        given = self._credentials or {}
        held = [f"{name}={given.get(name, '')}" for name in sorted(CREDENTIAL_VARIABLES)]
        return (self.kind, self.region, self._endpoint, digest(*held))

    def prices(self) -> PriceList:
        """On-demand prices from AWS's Price List, spot prices from EC2, each asked once."""
        at = self._settings.endpoint_url or f"AWS's endpoint in {PRICING_REGION}"
        return Ec2Prices(self._call, self._client, self._pricing_client, at, self._timeouts.request)

    def _pricing_client(self) -> Any:
        """The Price List client, made on first use (inside a call: its errors are the
        call's)."""
        with self._pricing_lock:
            if self._pricing is None:
                self._pricing = pricing_client(self._settings, self._credentials)
            return self._pricing

    def location_refusal(self, location: str) -> str:
        """A zone the settings have no subnet for (``ORCA_EC2_SUBNETS``)."""
        return "" if location in self.subnets else self._no_subnet(location)

    def _no_subnet(self, location: str) -> str:
        """Why nothing is made in ``location``: the settings have no subnet there."""
        known = ", ".join(sorted(self.subnets))
        return f"no subnet for location {location!r}: {ORCA_EC2_SUBNETS} knows {known}"

    def _machine_id(self, machine_id: object) -> str:
        return instance_id_of(machine_id)

    def _look_up(self, machine_id: str) -> Found | None:
        instance = self._instance(machine_id)
        return None if instance is None else Found(machine(instance), instance.tags)

    def _foreign(self, found: Found) -> str:
        why = not_ours(found.labels, self.owner, self.label_word)
        return (
            f"instance {found.machine.id} {why}: it is not a pool machine of "
            f"{whose(self.owner)}, so it is left alone"
        )

    def _remove(self, machine_id: str) -> None:
        try:
            self._call(
                "TerminateInstances",
                lambda: Terminating.model_validate(
                    self._client.terminate_instances(InstanceIds=[machine_id])
                ),
            )
        except CloudError as err:
            if err.code != "InvalidInstanceID.NotFound":
                raise

    def _launch_named(self, spec: MachineSpec, subnet: str, tries: Sequence[Market]) -> Created:
        existing = self._live_named(spec.name)
        mine = [i for i in existing if belongs_to(i.tags, self.owner, spec.pool)]
        if mine:
            found = machine(mine[0])
            different = mismatch(spec, found)
            if different:
                return Created.failure(different)
            log.info("instance %s is already %r: not launching another", found.id, spec.name)
            return Created.success(found)
        if existing:
            other = existing[0]
            return Created.failure(
                f"the name {spec.name!r} is taken by instance {other.id}, "
                f"{describe(other.tags)}; pick another name or delete that instance"
            )
        remembered = self._remembered(spec)
        if remembered is not None:
            return Created.success(remembered)
        options = self.pool(spec.pool).options_of(Ec2Options)
        image = self.catalogue.image_for(spec.pool, spec.machine_type, options)
        small = too_small(options.root_volume, image.id, image.root_size)
        refused = f"pool {spec.pool}: ec2.{small}" if small else ""
        refused = refused or self._kms_key_refusal(spec.pool, options.root_volume.kms_key)
        if refused:
            return Created.failure(refused)
        chosen = launch(
            options,
            spec.name,
            pool_labels(spec.pool, self.owner),
            image.root_device,
            runtime=True,
        )
        return self._launch_first(spec, subnet, image.id, chosen, tries)

    def _launch_first(
        self, spec: MachineSpec, subnet: str, image: str, chosen: Launch, tries: Sequence[Market]
    ) -> Created:
        """Launch in the first of ``tries`` with capacity; no stock when none has any.

        No capacity of a market is remembered for the type and zone
        (``machines.runtime.shortages``); the next market is tried in the same call,
        said in the log.
        """
        reason = ""
        for market in tries:
            if reason:
                log.warning("%s; launching %r %s instead", reason, spec.name, market)
            try:
                launched = self._launch(spec, subnet, image, chosen, market)
            except CloudError as err:
                if err.code in ACCOUNT_LIMIT_CODES:
                    raise AccountFullError(str(err), err.code, market) from None
                if err.code not in no_stock_codes(market):
                    raise
                self._stock.remember(spec.machine_type, spec.location, market)
                reason = self._stock.reason(
                    "EC2", spec.machine_type, spec.location, err.code, market
                )
                continue
            return Created.success(launched)
        return Created.out_of_stock(reason)

    def _launch(
        self, spec: MachineSpec, subnet: str, image: str, chosen: Launch, market: Market
    ) -> Machine:
        """RunInstances in ``market`` with one token for every try; after a lost answer,
        look first.

        Tries go on with backoff within the call's time. A lost answer may mean a launched
        instance, so the next try looks for it by name and sends RunInstances (same token)
        only when it is not there. A spot machine is a one-time request that terminates on
        interruption; a fallback to on-demand is another launch with its own token.
        """
        tags = chosen.tags
        params: dict[str, object] = {
            "ClientToken": str(uuid.uuid4()),
            "ImageId": image,
            "InstanceType": spec.machine_type,
            "MinCount": 1,
            "MaxCount": 1,
            "SubnetId": subnet,
            "SecurityGroupIds": [self.security_group],
            "IamInstanceProfile": _profile(self.instance_profile),
            **run_instances(chosen),
        }
        if market == Market.SPOT:
            params["InstanceMarketOptions"] = SPOT_OPTIONS
        if spec.user_data:
            params["UserData"] = spec.user_data
        lost = False
        where = f"EC2 RunInstances at {self._endpoint}"

        def launch_or_find() -> Instance:
            nonlocal lost
            if lost:
                found = self._mine_named(spec)
                if found is not None:
                    log.info("instance %s of the lost answer is %r", found.id, spec.name)
                    return found
            try:
                return self._run_instance(params)
            except _LOST:
                lost = True
                raise

        try:
            instance = retry.call(
                launch_or_find,
                retry_after,
                deadline=self._timeouts.call,
                what=where,
                observe=partial(self._tried, "RunInstances"),
            )
        except retry.GaveUp as gave_up:
            error = cloud_error(where, "RunInstances", gave_up.last, gave_up.attempts)
            raise (_lost_launch(spec, error) if lost else error.exhausted()) from None
        except (*BOTO_ERRORS, CloudError) as raised:
            error = cloud_error(where, "RunInstances", raised, 1)
            raise (_lost_launch(spec, error) if lost else error) from None
        log.info(
            "launched %s instance %s as %r in %s", market, instance.id, spec.name, spec.location
        )
        return machine(instance, tags)

    def _run_instance(self, params: Mapping[str, object]) -> Instance:
        reservation = Reservation.model_validate(self._client.run_instances(**params))
        if len(reservation.instances) != 1:
            raise CloudError(
                f"EC2 RunInstances at {self._endpoint} answered with "
                f"{len(reservation.instances)} instances instead of one",
                code=NOT_THE_API,
            )
        return reservation.instances[0]

    def _mine_named(self, spec: MachineSpec) -> Instance | None:
        """The live instance named ``spec.name`` of this owner and ``spec.pool``, if any."""
        mine = [
            i
            for i in self._live_named(spec.name)
            if belongs_to(i.tags, self.owner, spec.pool) and not mismatch(spec, machine(i))
        ]
        return mine[0] if mine else None

    def _remembered(self, spec: MachineSpec) -> Machine | None:
        """The instance this provider launched as ``spec.name``, if EC2 may not list it yet.

        EC2's lists are eventually consistent: a name filter can miss an instance launched
        a moment ago (the listing keeps it until it shows it), while asking for its id tells
        whether it is still alive.
        """
        remembered = self._listing.launched(spec.name, spec.pool)
        if remembered is None or mismatch(spec, remembered):
            return None
        instance = self._instance(remembered.id)
        if instance is None:
            return remembered
        return machine(instance) if instance.state.name in LIVE_STATES else None

    def _list(self, pool: str | None) -> list[Machine]:
        """The owner's pool machines (of ``pool``), each with the notices EC2 gave of it:
        the queue is read first, once, so an instance a message names and EC2 has ended
        since is listed as gone (``clouds.ec2.notices``)."""
        received = self._notices.receive()
        owner = {f"tag:{OWNER_LABEL}": [self.owner]} if self.owner else {}
        pools = {} if pool is None else {f"tag:{POOL_LABEL}": [pool]}
        found = self._instances({**owner, **pools}, spot=self._buys_spot(pool))
        mine = [instance for instance in found if belongs_to(instance.tags, self.owner, pool)]
        return self._notices.apply(received, mine, pool)

    def _queue(self) -> Any:
        """The SQS client of the notices' queue, made on first use."""
        with self._pricing_lock:
            if self._sqs is None:
                self._sqs = sqs_client(self._settings, self._credentials)
            return self._sqs

    def _queue_call(self, operation: str, fn: Callable[[Any], T]) -> T:
        """One request to the notices' queue, retried within one request's time: a queue
        out of reach must not hold the listing up for a whole call's."""
        sqs = self._queue()
        return self._call(
            operation,
            lambda: fn(sqs),
            where=f"SQS {operation} at {sqs.meta.endpoint_url}",
            deadline=self._timeouts.request,
        )

    def _receive_notices(self) -> list[QueueMessage]:
        """Up to ten of the queue's messages now, without waiting for more (short polling:
        a listing never waits for a notice)."""
        answer = self._queue_call(
            "ReceiveMessage",
            lambda sqs: QueueMessages.model_validate(
                sqs.receive_message(
                    QueueUrl=self.events_queue, MaxNumberOfMessages=10, WaitTimeSeconds=0
                )
            ),
        )
        return answer.messages

    def _delete_notices(self, messages: Sequence[QueueMessage]) -> None:
        """Delete the handled messages, in one request (a receive gives ten at most); one
        SQS could not delete (its receipt expired) is read and handled again."""
        entries = [{"Id": str(i), "ReceiptHandle": m.receipt} for i, m in enumerate(messages)]
        answer = self._queue_call(
            "DeleteMessageBatch",
            lambda sqs: DeletedMessages.model_validate(
                sqs.delete_message_batch(QueueUrl=self.events_queue, Entries=entries)
            ),
        )
        for failed in answer.failed:
            log.info("message %s of the notices' queue was not deleted (%s): it is read again",
                     messages[int(failed.id)].id, failed.code)  # fmt: skip

    def _tag_notices(self, instance_ids: Sequence[str], tags: dict[str, str]) -> None:
        """Write a notice on autoscaler's instances (``answers.notice_tags``)."""
        pairs = [{"Key": k, "Value": v} for k, v in tags.items()]
        self._call(
            "CreateTags",
            lambda: self._client.create_tags(Resources=list(instance_ids), Tags=pairs),
            deadline=self._timeouts.request,
        )

    def _noticed(self, machine: Machine, read: bool) -> None:
        """A machine this process lists under a notice for the first time: counted when
        read from the queue now; a spot machine under an interruption warning makes its
        type's spot market in its zone remembered as out, as a ``no_stock`` answer does
        (``ORCA_NO_STOCK_TTL``), so its replacement goes to the pool's next place."""
        if read:
            telemetry.noticed(self.kind, self.owner, machine.pool, machine.ending.value)
        log.info(
            "instance %s (%s) of pool %s is under EC2's notice: %s%s",
            machine.id,
            machine.name,
            machine.pool,
            machine.ending.value,
            f" at {machine.ends_at:%Y-%m-%d %H:%M:%S} UTC" if machine.ends_at else "",
        )
        if machine.ending == Ending.INTERRUPTING and machine.market == Market.SPOT:
            self._stock.remember(machine.machine_type, machine.location, Market.SPOT)

    def _list_owners(
        self, owners: Sequence[str], group: Sequence[Provider]
    ) -> list[tuple[str, Machine]]:
        spot = any(isinstance(p, Ec2Provider) and p._buys_spot(None) for p in group)
        found = self._instances({f"tag:{OWNER_LABEL}": list(owners)}, spot=spot)
        return [
            (owner, machine(instance))
            for instance in found
            if (owner := owner_among(instance.tags, owners)) is not None
        ]

    def _instances(self, filters: Mapping[str, list[str]], *, spot: bool) -> list[Instance]:
        """The pool instances ``filters`` select that are not terminated, and, with
        ``spot`` (a pool buys spot capacity), those EC2 terminated by interrupting them (a
        second filter: EC2 keeps terminated instances listed for about an hour, and only
        those say why they went)."""
        base = {f"tag:{ORCA_LABEL}": [ORCA_VALUE], **filters}
        found = self._find({**base, "instance-state-name": list(LISTED_STATES)})
        if spot:
            found += self._find(
                {
                    **base,
                    "instance-state-name": ["terminated"],
                    "state-reason-code": [SPOT_INTERRUPTION],
                }
            )
        return found

    def _buys_spot(self, pool: str | None) -> bool:
        """Whether ``pool`` (or any pool, for None) may have spot machines to list."""
        if pool is not None:
            return self.market(pool) != Market.ON_DEMAND
        return any(m != Market.ON_DEMAND for m in self.pool_market.values())

    def _by_name(self, name: str, pool: str) -> list[Machine]:
        """The live instances named ``name`` of this owner and ``pool``: one
        DescribeInstances."""
        return [machine(i) for i in self._live_named(name) if belongs_to(i.tags, self.owner, pool)]

    def _live_named(self, name: str) -> list[Instance]:
        return self._find({f"tag:{NAME_TAG}": [name], "instance-state-name": list(LIVE_STATES)})

    def _find(self, filters: Mapping[str, Sequence[str]]) -> list[Instance]:
        """Every instance matching ``filters``, over all of DescribeInstances' pages."""
        request: dict[str, Any] = {
            "Filters": [{"Name": name, "Values": list(values)} for name, values in filters.items()],
            "MaxResults": MAX_RESULTS,
        }
        found: list[Instance] = []
        while True:
            page = self._call(
                "DescribeInstances",
                lambda: InstancesPage.model_validate(self._client.describe_instances(**request)),
            )
            for reservation in page.reservations:
                found.extend(reservation.instances)
            if not page.next_token:
                return found
            request["NextToken"] = page.next_token

    def _instance(self, machine_id: str) -> Instance | None:
        """The instance of that id, or None when EC2 does not know it."""
        try:
            page = self._call(
                "DescribeInstances",
                lambda: InstancesPage.model_validate(
                    self._client.describe_instances(InstanceIds=[machine_id])
                ),
            )
        except CloudError as err:
            if err.code == "InvalidInstanceID.NotFound":
                return None
            raise
        instances = [i for r in page.reservations for i in r.instances if i.id == machine_id]
        return instances[0] if instances else None

    def check_options(
        self, pool: Pool, created: Collection[str] = (), keys: Mapping[str, str] | None = None
    ) -> list[tuple[str, str]]:
        """The pool's AMI looked up as a create would (read only): one missing, of the other
        architecture, or with a snapshot larger than the root volume, as (key, why)."""
        options = pool.options_of(Ec2Options)
        key = (
            "ec2.image"
            if options.image
            else "ec2.imageName"
            if options.image_name
            else ORCA_EC2_IMAGE
        )
        setting = (keys or {}).get(ORCA_EC2_IMAGE, ORCA_EC2_IMAGE)
        try:
            image = self.catalogue.image_for(pool.name, pool.machine_type, options, setting)
        except MachinesError as error:
            return [(key, str(error))]
        found = []
        small = too_small(options.root_volume, image.id, image.root_size)
        if small:
            found.append(("ec2.rootVolume.size", f"pool {pool.name}: ec2.{small}"))
        unusable = self._kms_key_refusal(pool.name, options.root_volume.kms_key)
        if unusable:
            found.append(("ec2.rootVolume.kmsKey", unusable))
        return found

    def _kms_key_refusal(self, pool: str, key: str) -> str:
        """Why the root volume's ``kmsKey`` cannot encrypt it (no such key, disabled or
        being deleted, not a symmetric encryption key), by ``kms:DescribeKey`` once per key;
        empty when it can, or when it cannot be asked (say AccessDenied: EC2 may still use
        a key the caller may not describe), which is logged as a warning, once."""
        if not key:
            return ""
        with self._pricing_lock:
            if key in self._kms_keys:
                return self._kms_keys[key]
        where = f"pool {pool}: ec2.rootVolume.kmsKey {key!r}"
        try:
            with self._pricing_lock:
                if self._kms is None:
                    self._kms = kms_client(self._settings, self._credentials)
                kms = self._kms
            answer = self._call(
                "DescribeKey",
                lambda: kms.describe_key(KeyId=key),
                where=f"KMS DescribeKey at {kms.meta.endpoint_url}",
            )
        except CloudError as error:
            if error.code != "NotFoundException":
                log.warning(
                    "%s could not be checked (%s): EC2 refuses a launch with a key that does "
                    "not exist or is not usable, so make sure it is",
                    where,
                    error,
                )
                return ""
            why = (
                f"{where} is no KMS key in region {self.region}: name an existing key by its "
                "id, ARN or alias (alias/...), or remove kmsKey to use EBS's default key"
            )
        else:
            why = _unusable_key(where, answer.get("KeyMetadata", {}))
        with self._pricing_lock:
            self._kms_keys[key] = why
        return why

    def _call(
        self, operation: str, fn: Callable[[], T], *, where: str = "", deadline: float = 0.0
    ) -> T:
        """One API call with retries within ``deadline`` seconds (default: the call's), its
        failures turned into ``CloudError``; ``where`` names the service and endpoint in
        messages (default: EC2's)."""
        where = where or f"EC2 {operation} at {self._endpoint}"
        try:
            return retry.call(
                fn,
                retry_after,
                deadline=deadline or self._timeouts.call,
                what=where,
                observe=partial(self._tried, operation),
            )
        except retry.GaveUp as gave_up:
            error = cloud_error(where, operation, gave_up.last, gave_up.attempts)
            raise error.exhausted() from None
        except BOTO_ERRORS as error:
            raise cloud_error(where, operation, error, 1) from None

    def _tried(self, operation: str, error: Exception | None, retried: bool) -> None:
        telemetry.tried(self.kind, operation, outcome(error), retried)


def _unusable_key(where: str, metadata: Mapping[str, Any]) -> str:
    """Why a KMS key ``DescribeKey`` answered cannot encrypt an EBS volume; empty when it
    can (EBS takes enabled symmetric encryption keys only: the EBS User Guide, "Amazon EBS
    encryption")."""
    state = metadata.get("KeyState", "Enabled")
    if state != "Enabled":
        return f"{where} is {state}: enable the key or name another"
    usage, spec = metadata.get("KeyUsage", ""), metadata.get("KeySpec", "")
    if usage not in ("", "ENCRYPT_DECRYPT") or spec not in ("", "SYMMETRIC_DEFAULT"):
        return (
            f"{where} is a {spec or usage} key: EBS encrypts only with symmetric encryption "
            "keys (SYMMETRIC_DEFAULT, ENCRYPT_DECRYPT); name one"
        )
    return ""


def _lost_launch(spec: MachineSpec, error: CloudError) -> CloudError:
    """The error of a launch that ended after RunInstances lost an answer."""
    return LostCreateError(
        f"{error}: the instance {spec.name!r} may have launched all the same; "
        f"machines({spec.pool!r}) will show it, and creating {spec.name!r} again returns it",
        code=error.code,
    )


def _profile(instance_profile: str) -> dict[str, str]:
    """RunInstances' IamInstanceProfile for a profile given by ARN or by name."""
    key = "Arn" if instance_profile.startswith("arn:") else "Name"
    return {key: instance_profile}
