"""Runs the real Pulumi program (``__main__.py``) under Pulumi's mocks: no CLI, no cloud.

``run_program`` resets the runtime, sets the stack's name and configuration, runs the program
as the Python language host does (``runpy`` on the project directory) and returns every
resource registered (type, name, parent, inputs, options), the invokes made and the resolved
stack outputs. The mocks answer the invokes the program makes with realistic values and
refuse an AMI lookup that is not Canonical's Ubuntu 24.04 for a known architecture. Where a
pool that spans places asks the clouds where its machines go (``machines.program.placement``),
the answer is ``placed`` (default: every machine at the pool's first place, no machine kept),
and what it reads of the clouds (``machines.program.reading``) is ``read``'s (default:
nothing), since no cloud is there to ask. A configuration the program refuses (it logs each
problem and exits, as plain ``pulumi`` shows them) raises its ``StackConfigError`` here.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import itertools
import runpy
import threading
import unittest.mock
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import pulumi
import yaml
from pulumi.runtime import mocks, settings
from pulumi.runtime.stack import run_pulumi_func
from pulumi.runtime.sync_await import _sync_await

from machines.program import compose
from machines.program.config.models import BaseDeployment
from machines.program.config.problems import StackConfigError
from machines.program.config.stack_config import PROJECT, StackConfig
from machines.program.placement import Placement
from machines.program.reading import Read
from machines.runtime.clouds import CLOUDS
from machines.runtime.clouds.ec2.settings import UBUNTU_OWNER, ubuntu_ami_name

ROOT = Path(__file__).resolve().parents[1]
STACK_FILES = sorted((ROOT / "stacks").glob("Pulumi.*.yaml"))


def two_clouds(path: Path) -> bool:
    """Whether a stack file names another cloud's settings (``orca-machines:<kind>``)."""
    config = yaml.safe_load(path.read_text())["config"]
    return any(f"{PROJECT}:{kind}" in config for kind in CLOUDS)


STACKS = [path for path in STACK_FILES if not two_clouds(path)]
"""The stack files on one cloud each, which the program's tests run alike."""
SPANNING_STACKS = [path for path in STACK_FILES if two_clouds(path)]
"""The stack files whose pools span clouds (``tests/pulumi/test_pulumi_span.py``)."""

SECRET_SIG = "4dabf18193072939515e22adb298388d"
"""The key by which Pulumi marks a secret value in serialized properties."""

SERVER_TYPES = {
    "cx23": "x86",
    "cx33": "x86",
    "cpx12": "x86",
    "ccx13": "x86",
    "cax11": "arm",
    "cax21": "arm",
}
INSTANCE_TYPES = {
    "t3.micro": ["x86_64"],
    "t3.small": ["x86_64"],
    "m5.large": ["x86_64"],
    "t2.micro": ["i386", "x86_64"],
    "t4g.small": ["arm64"],
    "c7g.large": ["arm64"],
}
AMIS = {
    ubuntu_ami_name("amd64"): "ami-0ubuntu2404amd64",
    ubuntu_ami_name("arm64"): "ami-0ubuntu2404arm64",
}
CUSTOM_AMI = {"x86_64": "ami-0c0c0c0c0c0c00001", "arm64": "ami-0c0c0c0c0c0c00002"}
"""The AMI of another owner's name filter, per EC2 architecture."""
AWS_ACCOUNT = "123456789012"
"""The account of the mocked AWS resources' ARNs and URLs."""
FIREWALL_IDS = {"workers": 4711}
NETWORK_IDS = {"ci": 8100}
PLACEMENT_GROUP_IDS = {"spread": 8200}
SNAPSHOTS = {"x86": 9100, "arm": 9200}
"""The newest snapshot of any selector, per Hetzner architecture."""


def stack_name(path: Path) -> str:
    """``local`` for ``Pulumi.local.yaml``."""
    return path.name.removeprefix("Pulumi.").removesuffix(".yaml")


def stack_file(path: Path) -> dict[str, Any]:
    """The ``config:`` mapping of a stack file."""
    config: dict[str, Any] = yaml.safe_load(path.read_text())["config"]
    return config


class CloudMocks(pulumi.runtime.Mocks):
    """Answers the program's resources and invokes as Hetzner's and AWS's providers would."""

    def __init__(self, servers: Sequence[dict[str, Any]] = ()) -> None:
        """``servers``: what Hetzner holds already, each with ``name``, ``serverType`` and
        ``labels``, answered to ``getServers`` by its label selector."""
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.inputs: dict[tuple[str, str], dict[str, Any]] = {}
        self.servers = list(servers)
        self._ids = itertools.count(1001)

    def call(self, args: pulumi.runtime.MockCallArgs) -> tuple[dict[str, Any], list[Any]]:
        self.calls.append((args.token, args.args))
        if args.token == "hcloud:index/getServerType:getServerType":
            name = args.args["name"]
            return {"id": 1, "name": name, "architecture": SERVER_TYPES[name], "cores": 2}, []
        if args.token == "hcloud:index/getServers:getServers":
            terms = dict(t.split("=", 1) for t in args.args["withSelector"].split(",") if "=" in t)
            found = [
                {"name": s["name"], "serverType": s["serverType"], "labels": s["labels"]}
                for s in self.servers
                if all(s["labels"].get(k) == v for k, v in terms.items())
            ]
            return {"id": args.args["withSelector"], "servers": found}, []
        if args.token == "hcloud:index/getFirewall:getFirewall":
            name = args.args["name"]
            return {"id": FIREWALL_IDS[name], "name": name, "labels": {}}, []
        if args.token == "aws:ec2/getInstanceType:getInstanceType":
            name = args.args["instanceType"]
            return {"instanceType": name, "supportedArchitectures": INSTANCE_TYPES[name]}, []
        if args.token == "hcloud:index/getNetwork:getNetwork":
            name = args.args["name"]
            return {"id": NETWORK_IDS[name], "name": name, "ipRange": "10.0.0.0/16"}, []
        if args.token == "hcloud:index/getPlacementGroup:getPlacementGroup":
            name = args.args["name"]
            return {"id": PLACEMENT_GROUP_IDS[name], "name": name, "type": "spread"}, []
        if args.token == "hcloud:index/getImage:getImage":
            assert args.args["mostRecent"] is True, args.args
            arch = args.args["withArchitecture"]
            return {"id": SNAPSHOTS[arch], "architecture": arch, "type": "snapshot"}, []
        if args.token == "aws:ec2/getAmi:getAmi":
            return self._ami(args.args), []
        raise AssertionError(f"unexpected invoke {args.token}")

    def _ami(self, args: dict[str, Any]) -> dict[str, Any]:
        """The newest AMI of an owner and a name filter for an architecture: Canonical's
        Ubuntu of ``AMIS``, or for another owner ``CUSTOM_AMI`` of the architecture."""
        assert args["mostRecent"] is True, args
        filters = {f["name"]: f["values"] for f in args["filters"]}
        (pattern,) = filters["name"]
        (arch,) = filters["architecture"]
        (owner,) = args["owners"]
        if owner != UBUNTU_OWNER:
            return {"id": CUSTOM_AMI[arch], "name": pattern, "ownerId": owner}
        docker = "arm64" if arch == "arm64" else "amd64"
        return {
            "id": AMIS.get(pattern) or AMIS[ubuntu_ami_name(docker)],
            "name": pattern.replace("*", "20250610"),
            "ownerId": UBUNTU_OWNER,
        }

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict[str, Any]]:
        self.inputs[(args.typ, args.name)] = args.inputs
        number = next(self._ids)
        state = dict(args.inputs)
        if args.typ == "hcloud:index/server:Server":
            state.update(
                ipv4Address=f"203.0.113.{number % 250}",
                ipv6Network=f"2001:db8:{number:x}::/64",
                status="running",
            )
        elif args.typ == "aws:ec2/instance:Instance":
            state.update(privateIp=f"10.0.{number // 250}.{number % 250}", publicIp="")
            return f"i-{number:017x}", state
        elif args.typ == "aws:sqs/queue:Queue":
            name = args.inputs["name"]
            state.update(
                url=f"https://sqs.eu-central-1.amazonaws.com/{AWS_ACCOUNT}/{name}",
                arn=f"arn:aws:sqs:eu-central-1:{AWS_ACCOUNT}:{name}",
            )
            return str(state["url"]), state
        elif args.typ == "aws:cloudwatch/eventRule:EventRule":
            state.update(
                arn=f"arn:aws:events:eu-central-1:{AWS_ACCOUNT}:rule/{args.inputs['name']}"
            )
            return str(args.inputs["name"]), state
        elif args.typ.startswith("aws:"):
            return f"{args.name}-{number}", state
        return str(number), state


@dataclass(frozen=True)
class Registered:
    """One resource the program registered."""

    type: str
    name: str
    urn: str
    id: str
    parent: str
    custom: bool
    ignore_changes: tuple[str, ...]
    delete_before_replace: bool
    provider: str
    """The explicit provider's reference (``<urn>::<id>``), empty for a default provider."""
    inputs: dict[str, Any] = field(repr=False)


@contextlib.contextmanager
def _worker_loop_closed() -> Iterator[None]:
    """Close the event loop the mock monitor makes for the executor thread it is called on.

    Pulumi's mocks call the monitor on the SDK's worker threads and give each thread a new
    loop, never closed. Left to the collector, such a loop and its self-pipe socket die in
    one cycle in any order, and a later test hears "Invalid file descriptor: -1" from the
    loop's finalizer.
    """
    try:
        yield
    finally:
        if threading.current_thread() is not threading.main_thread():
            policy = asyncio.get_event_loop_policy()
            try:
                loop = policy.get_event_loop()
            except RuntimeError:  # none was made for this thread
                return
            if not loop.is_running():
                loop.close()
                policy.set_event_loop(None)


class RecordingMonitor(mocks.MockMonitor):
    """The mock monitor, also keeping each registration's parent and options."""

    def __init__(self, cloud: CloudMocks) -> None:
        super().__init__(cloud)
        self.cloud = cloud
        self.registered: list[Registered] = []

    def Invoke(self, request: Any) -> Any:
        with _worker_loop_closed():
            return super().Invoke(request)  # type: ignore[no-untyped-call]

    def ReadResource(self, request: Any) -> Any:
        with _worker_loop_closed():
            return super().ReadResource(request)  # type: ignore[no-untyped-call]

    def RegisterResource(self, request: Any) -> Any:
        with _worker_loop_closed():
            response = super().RegisterResource(request)  # type: ignore[no-untyped-call]
        if request.type != "pulumi:pulumi:Stack":
            self.registered.append(
                Registered(
                    type=request.type,
                    name=request.name,
                    urn=response.urn,
                    id=response.id,
                    parent=request.parent,
                    custom=request.custom,
                    ignore_changes=tuple(request.ignoreChanges),
                    delete_before_replace=request.deleteBeforeReplace,
                    provider=request.provider,
                    inputs=self.cloud.inputs[(request.type, request.name)],
                )
            )
        return response


@dataclass(frozen=True)
class Run:
    """What one run of the program did."""

    stack_urn: str
    resources: list[Registered]
    calls: list[tuple[str, dict[str, Any]]]
    outputs: dict[str, Any]

    def of_type(self, type_: str) -> list[Registered]:
        return [r for r in self.resources if r.type == type_]

    def named(self, type_: str, name: str) -> Registered:
        (found,) = [r for r in self.of_type(type_) if r.name == name]
        return found

    def children(self, parent: Registered) -> list[Registered]:
        return [r for r in self.resources if r.parent == parent.urn]


@dataclass(frozen=True)
class StackRun:
    """A stack file, its configuration as written, and one run of the program on it."""

    path: Path
    name: str
    raw: dict[str, Any]
    deployment: BaseDeployment
    run: Run

    def get(self, key: str, default: Any = None) -> Any:
        """A key of the project's namespace as the file writes it (``pools``, ``owner``...)."""
        return self.raw.get(f"{PROJECT}:{key}", default)

    @property
    def owner(self) -> str:
        owner: str = self.get("owner", self.name)
        return owner

    @property
    def pools(self) -> list[dict[str, Any]]:
        pools: list[dict[str, Any]] = self.get("pools", [])
        return pools


def _run_main() -> None:
    """The program, as the language host runs it."""
    runpy.run_path(str(ROOT), run_name="__main__")


Placements = Callable[[BaseDeployment, Read | None, Mapping[str, str]], dict[str, Placement]]
Reads = Callable[[BaseDeployment, Mapping[str, str], Mapping[str, str]], Read | None]


def nothing_read(
    _deployment: BaseDeployment, _environ: Mapping[str, str], _asked: Mapping[str, str]
) -> Read | None:
    """No cloud to read (``machines.program.reading``): nothing listed, no fence asked."""
    return None


def at_first_places(
    deployment: BaseDeployment, _read: Read | None, _environ: Mapping[str, str]
) -> dict[str, Placement]:
    """Each spanning pool's machines all at its first place: a stack with none kept yet, on
    clouds that all have stock."""
    return {
        p.name: Placement(tuple(p.places[:1]) * p.size)
        for p in deployment.pools
        if p.spans(deployment.provider)
    }


def run_program(
    stack: str,
    config: StackConfig,
    cloud: CloudMocks | None = None,
    placed: Placements = at_first_places,
    read: Reads = nothing_read,
) -> Run:
    """Run ``__main__.py`` as stack ``stack`` with ``config``, under mocks; what it reads of
    the clouds is ``read``'s answer, where it places machines ``placed``'s."""
    cloud = cloud or CloudMocks()
    monitor = RecordingMonitor(cloud)
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    settings.reset_options()
    try:
        mocks.set_mocks(cloud, project=PROJECT, stack=stack, preview=False, monitor=monitor)
        pulumi.runtime.set_all_config(dict(config.values), sorted(config.secret_keys))
        with (
            unittest.mock.patch.object(compose, "placements", placed),
            unittest.mock.patch.object(compose, "read_pools", read),
        ):
            try:
                _sync_await(run_pulumi_func(_run_main))
            except SystemExit as stopped:  # a refused configuration: logged, then the exit
                if isinstance(stopped.__cause__, StackConfigError):
                    raise stopped.__cause__ from None
                raise
        root = settings.get_root_resource()
        assert root is not None
        exported = cast(Any, root).outputs  # the Stack resource's, not every Resource's
        outputs = _sync_await(pulumi.Output.from_input(exported).future())
        stack_urn = _sync_await(root.urn.future())
    finally:
        pulumi.runtime.set_all_config({}, [])
        settings.reset_options()
        asyncio.set_event_loop(None)
        loop.close()
        # The run's gRPC and asyncio objects have finalizers: run them now, not in whatever
        # code the collector next interrupts (CPython 3.11's ast.parse, interrupted so,
        # fails with "AST constructor recursion depth mismatch").
        gc.collect()
    return Run(stack_urn or "", monitor.registered, cloud.calls, outputs or {})


def is_secret(value: Any) -> bool:
    """True when a serialized input is a Pulumi secret."""
    return isinstance(value, dict) and SECRET_SIG in value


def reveal(value: Any) -> Any:
    """The value of a serialized input, secret or not."""
    return value["value"] if is_secret(value) else value


def hetzner(**keys: Any) -> dict[str, Any]:
    """A small valid Hetzner stack configuration, with ``keys`` (project keys) replaced."""
    config: dict[str, Any] = {
        f"{PROJECT}:provider": "hetzner",
        f"{PROJECT}:pools": [
            {"name": "x86", "machineType": "cx23", "location": "fsn1", "size": 2},
            {"name": "arm", "machineType": "cax11", "location": "nbg1", "size": 1},
        ],
    }
    config.update({f"{PROJECT}:{k}": v for k, v in keys.items()})
    return config


def ec2(**keys: Any) -> dict[str, Any]:
    """A small valid EC2 stack configuration, with ``keys`` (project keys) replaced."""
    config: dict[str, Any] = {
        "aws:region": "eu-central-1",
        f"{PROJECT}:provider": "ec2",
        f"{PROJECT}:subnets": {"eu-central-1a": "subnet-0a", "eu-central-1b": "subnet-0b"},
        f"{PROJECT}:securityGroup": "sg-0123",
        f"{PROJECT}:instanceProfile": "orca-workers",
        f"{PROJECT}:pools": [
            {"name": "arm", "machineType": "t4g.small", "location": "eu-central-1a", "size": 2},
            {"name": "x86", "machineType": "t3.small", "location": "eu-central-1b", "size": 1},
        ],
    }
    config.update({f"{PROJECT}:{k}": v for k, v in keys.items()})
    return config


def run(
    config: dict[str, Any],
    stack: str = "test",
    secret_keys: tuple[str, ...] = (),
    cloud: CloudMocks | None = None,
    placed: Placements = at_first_places,
    read: Reads = nothing_read,
) -> Run:
    """Run the program on a configuration written like a stack file's ``config:``."""
    parsed = StackConfig.from_stack_file(config)
    values = StackConfig(parsed.values, frozenset(secret_keys))
    return run_program(stack, values, cloud, placed, read)
