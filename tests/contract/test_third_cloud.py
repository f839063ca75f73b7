"""A third cloud is its own package and one line in each registry (``testkit.fake_cloud``, a
cloud kept in a file): the runtime reaches it through ``Provider.of``, a stack file of it is
loaded and checked, its no-stock answer exits 3 from the CLI, its stack runs through the real
engine (preview, up, a killed run recovered, destroy), and nothing outside its folder names it.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from emulator.process import PROJECT_ROOT
from machines import (
    ForeignMachineError,
    MachineSpec,
    Provider,
    StackMachineError,
    Status,
    automation,
)
from machines.runtime import clouds as runtime_clouds
from machines.runtime.labels import pool_labels
from testkit import fake_cloud, readme
from testkit.commands import machines_cli
from testkit.engine_run import engine_processes, wait_for
from testkit.fake_cloud import Store
from testkit.specs import OWNER

KIND = fake_cloud.KIND
STACK = "third"
PASSPHRASE = "third-cloud-passphrase"
SMALL = {"name": "small", "machineType": "f1.small", "location": "here", "size": 1}
WAIT = 180.0
"""Seconds a test waits for an event of an engine run it killed."""


@pytest.fixture
def store(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Store:
    monkeypatch.delenv("ORCA_POOL_MAX", raising=False)
    monkeypatch.delenv("ORCA_POOLS", raising=False)
    return fake_cloud.register(monkeypatch, tmp_path / "cloud.json")


def spec(name: str, pool: str = "ci") -> MachineSpec:
    return MachineSpec(name=name, machine_type="f1.small", location="here", pool=pool)


# The runtime, in this process.


def test_the_registry_line_is_all_provider_of_needs(store: Store) -> None:
    provider = Provider.of(KIND, OWNER)

    assert (provider.kind, provider.owner) == (KIND, OWNER)
    assert provider.arch("f1.arm") == "arm64"


def test_a_create_is_listed_at_once_and_by_another_provider_once_it_lists(store: Store) -> None:
    provider = Provider.of(KIND, OWNER)
    assert provider.machines("ci") == []

    made = provider.create(spec("ci-1"))

    assert made.ok
    assert made.machine is not None
    assert [m.id for m in provider.machines("ci")] == [made.machine.id]
    assert store.requests["list"] == 1
    assert [m.id for m in Provider.of(KIND, OWNER).machines("ci")] == [made.machine.id]


def test_a_retried_create_returns_its_machine(store: Store) -> None:
    provider = Provider.of(KIND, OWNER)
    first = provider.create(spec("ci-1"))

    again = provider.create(spec("ci-1"))

    assert again.machine == first.machine
    assert len(store.live()) == 1


def test_its_no_stock_answer_is_no_stock(store: Store) -> None:
    store.sell_out("f1.small", "here")

    made = Provider.of(KIND, OWNER).create(spec("ci-1"))

    assert made.no_stock
    assert store.live() == []


def test_a_delete_of_a_machine_it_made_is_one_request(store: Store) -> None:
    provider = Provider.of(KIND, OWNER)
    made = provider.create(spec("ci-1")).machine
    assert made is not None
    store.clear_requests()

    assert provider.delete(made.id) is True

    assert store.requests == {"delete": 1}
    assert [m for m in provider.machines("ci") if m.status != Status.DELETING] == []
    assert store.live() == []


def test_a_delete_checks_whose_machine_it_is_when_the_listing_does_not_show_it(
    store: Store,
) -> None:
    theirs = store.add("db-1", "f1.small", "here", pool_labels("ci", "staging"))
    kept = store.add(
        f"{OWNER}-ci-1.stack",
        "f1.small",
        "here",
        {**pool_labels("ci", OWNER), "orca-managed-by": "pulumi"},
    )
    provider = Provider.of(KIND, OWNER)

    with pytest.raises(ForeignMachineError, match=rf"{theirs} \(db-1\) belongs to owner 'staging'"):
        provider.delete(str(theirs))
    with pytest.raises(StackMachineError, match="size of pool ci"):
        provider.delete(str(kept))

    assert store.requests["delete"] == 0
    assert sorted(store.live()) == sorted([str(theirs), str(kept)])


def test_a_pools_max_counts_the_listing_and_the_creates(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    store.add(f"{OWNER}-ci-1.stack", "f1.small", "here", pool_labels("ci", OWNER))
    monkeypatch.setenv("ORCA_POOL_MAX", "ci=2")
    provider = Provider.of(KIND, OWNER)

    made = provider.create(spec("ci-a1"))
    refused = provider.create(spec("ci-a2"))

    assert made.ok
    assert refused.failed
    assert refused.reason.startswith("pool ci has 2 machines")
    assert len(store.live()) == 2


# The CLI, the stack file and the engine, in child processes.


@dataclass(frozen=True)
class FakeStack:
    """A project copy with a stack ``STACK`` on the fake cloud, its state and store."""

    project: Path
    state: Path
    store: Store

    def write(self, pools: list[dict[str, object]], **config: object) -> None:
        """The stack file: the fake cloud, its store and ``pools``, and ``config`` beside."""
        settings = {
            "orca-machines:provider": KIND,
            "fake:store": str(self.store.path),
            "orca-machines:pools": pools,
            **config,
        }
        path = self.project / "stacks" / f"Pulumi.{STACK}.yaml"
        salt = yaml.safe_load(path.read_text()).get("encryptionsalt") if path.exists() else None
        path.write_text(
            yaml.safe_dump({**({"encryptionsalt": salt} if salt else {}), "config": settings})
        )

    def stack_machines(self) -> dict[str, str]:
        """The stack's machines in the cloud, by name: id."""
        return {s.name: str(i) for i, s in self.store.servers().items() if ".stack" in s.name}


@pytest.fixture
def fake_stack(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, store: Store
) -> Iterator[FakeStack]:
    """The environment a CI job of this stack has: the project, state, passphrase and the
    fake cloud's settings, and its registry lines in every child process."""
    project = automation.copy_project(tmp_path / "project")
    state = tmp_path / "state"
    state.mkdir()
    for name, value in {
        **fake_cloud.child_env(),
        "ORCA_PULUMI_PROJECT": str(project),
        "PULUMI_BACKEND_URL": state.as_uri(),
        "PULUMI_CONFIG_PASSPHRASE": PASSPHRASE,
    }.items():
        monkeypatch.setenv(name, value)
    stack = FakeStack(project, state, store)
    yield stack
    if stack.store.live() and (project / "stacks" / f"Pulumi.{STACK}.yaml").exists():
        machines_cli("destroy", STACK, "--yes", "-q")


def test_a_stack_file_of_it_is_checked_before_anything_is_made(fake_stack: FakeStack) -> None:
    fake_stack.write(
        [{**SMALL, "fake": {"disk": 5, "colour": "red"}}],
        **{"fake:stor": "typo", "fake:token": fake_cloud.TOKEN},
    )

    done = machines_cli("preview", STACK, "-q")

    assert done.returncode == 1, done.stderr
    said = done.stderr
    assert "pools[0].fake.colour" in said, said
    assert "fake:stor: unknown key of the fake provider (did you mean fake:store?)" in said, said
    assert "fake:token: is in plain text" in said, said
    assert fake_cloud.TOKEN not in said + done.stdout
    assert fake_stack.store.servers() == {}


def test_its_no_stock_answer_exits_3_from_the_cli(fake_stack: FakeStack) -> None:
    fake_stack.store.sell_out("f1.small", "here")

    done = machines_cli(
        "create", "ci", "ci-1", "--provider", KIND, "--owner", OWNER,
        "--type", "f1.small", "--location", "here",
    )  # fmt: skip

    assert done.returncode == 3, done.stderr
    assert "no stock" in done.stderr or "sold_out" in done.stderr, done.stderr
    assert fake_stack.store.servers() == {}


@pytest.mark.engine
def test_its_pool_shows_in_a_preview_and_up_makes_it(fake_stack: FakeStack) -> None:
    fake_stack.write([SMALL])

    table = fake_stack.project / "preview.md"
    preview = machines_cli("preview", STACK, "-q", "--markdown", str(table))

    assert preview.returncode == 2, preview.stderr
    assert f"| create | `{fake_cloud.MACHINE}` | `{STACK}-small-1` |" in table.read_text()
    assert "| `small` | 0 → 1 | 0 | 0 |" in table.read_text(), "the pool's row counts its machine"
    assert fake_stack.store.servers() == {}, "a preview makes nothing"

    up = machines_cli("up", STACK, "-q")

    assert up.returncode == 0, up.stderr
    assert list(fake_stack.stack_machines()) == [f"{STACK}-small-1.stack"]
    assert machines_cli("preview", STACK, "-q").returncode == 0, "up left nothing to do"


@pytest.mark.engine
def test_an_up_without_stock_exits_3_naming_the_pool(fake_stack: FakeStack) -> None:
    fake_stack.write([SMALL])
    fake_stack.store.sell_out("f1.small", "here")

    up = machines_cli("up", STACK, "-q")

    assert up.returncode == 3, up.stderr
    assert "no stock of f1.small in here for pool small" in up.stderr, up.stderr


@pytest.mark.engine
def test_a_killed_runs_machines_are_found_again(fake_stack: FakeStack) -> None:
    fake_stack.write([{**SMALL, "size": 0}])
    assert machines_cli("up", STACK, "-q").returncode == 0
    fake_stack.write([{**SMALL, "size": 2}])
    fake_stack.store.hold()
    run = subprocess.Popen(
        [sys.executable, "-m", "machines", "up", STACK, "-q"],
        cwd=PROJECT_ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        wait_for(lambda: len(fake_stack.stack_machines()) == 2, "both creates in flight", WAIT)
        for pid in [run.pid, *engine_processes(fake_stack.state)]:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        run.wait(timeout=60)
        wait_for(lambda: not engine_processes(fake_stack.state), "the killed run ending", 60)
    finally:
        fake_stack.store.hold(False)
    made = fake_stack.stack_machines()

    again = machines_cli("up", STACK)

    assert again.returncode == 0, again.stderr
    said = again.stdout + again.stderr
    assert "a killed run left 2 create(s) pending" in said, said
    assert f"adopted {STACK}-small-1" in said, said
    assert f"adopted {STACK}-small-2" in said, said
    assert fake_stack.stack_machines() == made, "the half-made servers are the stack's"


@pytest.mark.engine
def test_a_destroy_removes_the_stacks_and_the_autoscalers_machines(
    fake_stack: FakeStack,
) -> None:
    fake_stack.write([SMALL])
    assert machines_cli("up", STACK, "-q").returncode == 0
    made = Provider.of(KIND, STACK).create(spec("small-a1", pool="small"))
    assert made.ok

    done = machines_cli("destroy", STACK, "--yes", "-q")

    assert done.returncode == 0, done.stderr
    assert fake_stack.store.live() == []


def test_nothing_outside_its_folder_names_it() -> None:
    named = [
        str(path.relative_to(PROJECT_ROOT))
        for folder in ("machines", "emulator", "scripts", "tools", "docs", "stacks")
        for path in (PROJECT_ROOT / folder).rglob("*")
        if path.is_file()
        and path.suffix in (".py", ".md", ".yaml", ".toml", "")
        and "fake_cloud" in path.read_text(errors="replace")
    ]
    assert named == ["docs/developing.md"]


def adding_a_cloud() -> list[str]:
    """The files ``docs/developing.md`` says adding a cloud touches."""
    rows = readme.table(readme.section("Adding a cloud", readme.doc("developing")))
    return [re.findall(r"`([^`]+)`", row.split(" | ")[0])[0] for row in rows]


def test_adding_a_cloud_touches_the_files_developing_md_lists() -> None:
    files = adding_a_cloud()
    own = [f for f in files if "<kind>" in f]
    shared = [f for f in files if "<kind>" not in f]

    fake = {p.name for p in (PROJECT_ROOT / "testkit" / "fake_cloud").glob("*.py")}
    assert fake - {"__init__.py", "store.py", "prices.py"} == {Path(f).name for f in own}, (
        "the fake cloud is the listed modules (and its store, which stands for its API, and "
        "its price list, which a cloud has beside them)"
    )
    for kind in runtime_clouds.CLOUDS:
        missing = [f for f in own if not (PROJECT_ROOT / f.replace("<kind>", kind)).is_file()]
        assert missing == [], f"{kind} lacks what the table lists"
    registries = [f for f in shared if f.endswith("__init__.py")]
    assert sorted(registries) == [
        "machines/program/clouds/__init__.py",
        "machines/runtime/clouds/__init__.py",
    ]
    for registry, line in zip(
        sorted(registries), (fake_cloud.PROGRAM_LINE, fake_cloud.RUNTIME_LINE), strict=True
    ):
        text = (PROJECT_ROOT / registry).read_text()
        kinds = [kind for kind in runtime_clouds.CLOUDS if f'"{kind}": "' in text]
        assert kinds == list(runtime_clouds.CLOUDS), f"{registry} has a line per cloud"
        assert line[0] == KIND
    assert set(shared) - set(registries) == {"docs/settings.md"}
