"""One cloud as the contract tests see it: the same questions asked of Hetzner and EC2.

A ``Cloud`` is emptied and this process's environment points at it; ``provider()`` builds
the provider the autoscaler would, and the other members look behind the provider's back
(what really exists, a machine made by someone else, a cloud out of stock).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from emulator.process import Emulator
from machines.runtime.models import MachineSpec, Market
from machines.runtime.prices import Priced
from machines.runtime.provider import Provider
from testkit import hetzner, moto_server
from testkit.fault_proxy import Fault, FaultProxy
from testkit.specs import OWNER, spec

Read = Literal["prices", "offers", "listings"]
"""What the cloud is asked for beside machines: a price, or where a type is offered."""

Trouble = Literal["busy", "throttled", "slow", "late", "garbled", "down"]
"""How the cloud answers a ``Read`` from now on: ``busy`` and ``throttled`` twice (a 503, a
429 or EC2's throttling), then as usual; ``slow`` never within the call's time; ``late``
once two seconds late, then as usual; ``garbled`` a 200 of another shape, always; ``down``
a 503, always."""


@dataclass(frozen=True)
class Cloud:
    """One cloud for the contract tests; see the module's docstring."""

    kind: str
    arches: dict[str, str]
    """Machine types of the cloud and Docker's name of their architecture."""
    malformed_id: str
    """A string that is no machine id on this cloud (the other cloud's form)."""
    absent_id: str
    """A well-formed id of a machine that does not exist."""
    secret: str
    """A credential in this process's environment that nothing may show."""
    live: Callable[[], list[str]]
    """The ids of every machine the cloud holds and is not deleting, whoever made it."""
    foreign: Callable[[str, dict[str, str]], str]
    """Make a machine of that name and labels (tags) behind the provider's back: its id."""
    out_of_stock: Callable[[MachineSpec], None]
    """From now on, the cloud has no capacity for the spec's type in its location."""
    creates: Callable[[], int]
    """How many create requests (POST /servers, RunInstances) reached the cloud so far."""
    priced: Priced
    """A machine whose price the cloud lists (moto: a spot price; its Price List is none)."""
    trouble: Callable[[Read, Trouble], None]
    """From now on, the cloud answers that read so (see ``Trouble``)."""
    reads: Callable[[Read], int]
    """How many requests of that read reached the cloud so far."""
    requests: Callable[[], int]
    """How many requests of any kind reached the cloud so far."""
    late_create: Callable[[float], None]
    """The next create's answer comes that many seconds late (the machine is made: on EC2
    at once, on the emulator after the wait)."""
    creates_refused: Callable[[], None]
    """From now on, every create is answered 503 (nothing made): a call retries it until its
    time runs out."""
    account_full: Callable[[], None]
    """From now on, the cloud refuses every on-demand create as its account at its limit
    (the emulator's project server limit at the servers it holds; EC2's ``VcpuLimitExceeded``
    from the proxy, which moto never answers)."""

    def spec(self, name: str = "ci-1", **fields: str) -> MachineSpec:
        """``testkit.specs.spec`` on this cloud."""
        return spec(name, cloud=self.kind, **fields)

    def provider(self, owner: str = OWNER) -> Provider:
        """``Provider.of(kind, owner)``, as the autoscaler builds it."""
        return Provider.of(self.kind, owner)


def of_emulator(emulator: Emulator) -> Cloud:
    """The Hetzner emulator as a ``Cloud``; the environment must already point at it."""
    hcloud = hetzner.client(emulator)

    def live() -> list[str]:
        return [str(s.id) for s in hcloud.servers.get_all() if s.status != "deleting"]

    def out_of_stock(spec: MachineSpec) -> None:
        where = {"server_type": spec.machine_type, "location": spec.location}
        emulator.control.set_stock([{**where, "code": "resource_unavailable"}])

    paths = {"prices": "/v1/pricing", "offers": "/v1/server_types", "listings": "/v1/servers"}

    def trouble(read: Read, how: Trouble) -> None:
        rule: dict[str, object] = {"method": "GET", "path": paths[read]}
        rule |= {
            "busy": {"kind": "error", "status": 503, "code": "unavailable", "times": 2},
            "throttled": {"kind": "error", "status": 429, "code": "rate_limit_exceeded",
                          "times": 2},
            "slow": {"kind": "delay", "seconds": 10},
            "late": {"kind": "delay", "seconds": 2, "times": 1},
            "garbled": {"kind": "error", "status": 200, "code": "not_a_list"},
            "down": {"kind": "error", "status": 503, "code": "unavailable"},
        }[how]  # fmt: skip
        emulator.control.set_faults([rule])

    return Cloud(
        kind="hetzner",
        arches={"cx23": "amd64", "cpx32": "amd64", "ccx13": "amd64", "cax11": "arm64"},
        malformed_id="i-0123456789abcdef0",
        absent_id="987654321",
        secret=hetzner.TOKEN,
        live=live,
        foreign=lambda name, labels: str(hetzner.foreign_server(hcloud, name, labels)),
        out_of_stock=out_of_stock,
        creates=lambda: emulator.control.requests().get("POST /v1/servers"),
        priced=("cx23", "fsn1", Market.ON_DEMAND),
        trouble=trouble,
        reads=lambda read: emulator.control.requests().get(f"GET {paths[read]}"),
        requests=lambda: emulator.control.requests().total,
        late_create=lambda seconds: emulator.control.set_faults(
            [
                {
                    "kind": "delay",
                    "method": "POST",
                    "path_regex": "/v1/servers",
                    "seconds": seconds,
                    "times": 1,
                }
            ]
        ),
        creates_refused=lambda: emulator.control.set_faults(
            [{"kind": "error", "method": "POST", "path_regex": "/v1/servers", "status": 503}]
        ),
        account_full=lambda: emulator.control.set_limits(servers=len(live())),
    )


def of_moto(moto: moto_server.MotoServer, proxy: FaultProxy, secret: str) -> Cloud:
    """moto behind the fault proxy as a ``Cloud``; the environment must point at the proxy.

    Out of stock is EC2's answer to RunInstances, ``InsufficientInstanceCapacity`` (an HTTP
    500, as EC2 gives it), from the proxy: moto never runs out.
    """
    aws = moto_server.client(moto.url)

    def live() -> list[str]:
        reservations = aws.describe_instances(
            Filters=[{"Name": "instance-state-name", "Values": ["pending", "running"]}]
        )["Reservations"]
        return [i["InstanceId"] for r in reservations for i in r["Instances"]]

    def out_of_stock(spec: MachineSpec) -> None:
        proxy.set_faults(
            Fault("error", "RunInstances", status=500, code="InsufficientInstanceCapacity")
        )

    actions = {
        "prices": "DescribeSpotPriceHistory",
        "offers": "DescribeInstanceTypeOfferings",
        "listings": "DescribeInstances",
    }

    def trouble(read: Read, how: Trouble) -> None:
        action = actions[read]
        proxy.set_faults(
            {
                "busy": Fault("error", action, status=503, code="Unavailable", times=2),
                "throttled": Fault("error", action, status=503, code="RequestLimitExceeded",
                                   times=2),
                "slow": Fault("delay", action, seconds=10),
                "late": Fault("delay", action, seconds=2, times=1),
                "garbled": Fault("error", action, status=200, code="NotAnAnswer"),
                "down": Fault("error", action, status=503, code="Unavailable"),
            }[how]
        )  # fmt: skip

    return Cloud(
        kind="ec2",
        arches={
            "t3.micro": "amd64",
            "c5.large": "amd64",
            "t4g.micro": "arm64",
            "m7g.large": "arm64",
        },
        malformed_id="4711",
        absent_id="i-0123456789abcdef0",
        secret=secret,
        live=live,
        foreign=lambda name, tags: moto_server.launch_tagged(aws, name, tags),
        out_of_stock=out_of_stock,
        creates=lambda: proxy.requests["RunInstances"],
        priced=("t3.micro", "eu-central-1a", Market.SPOT),
        trouble=trouble,
        reads=lambda read: proxy.requests[actions[read]],
        requests=lambda: sum(proxy.requests.values()),
        late_create=lambda seconds: proxy.set_faults(
            Fault("delay", "RunInstances", seconds=seconds, times=1)
        ),
        creates_refused=lambda: proxy.set_faults(
            Fault("error", "RunInstances", status=503, code="Unavailable")
        ),
        account_full=lambda: proxy.set_faults(
            Fault("error", "RunInstances", status=400, code="VcpuLimitExceeded")
        ),
    )
