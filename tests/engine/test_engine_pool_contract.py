"""One pool, two controllers, through the real engine against the emulator.

The stack (owner ``exp``, pools ``lab`` and ``ci``) keeps its machines; the autoscaler makes
its own through the runtime API; the official ``hcloud`` client checks what exists. The
tests run in order on one stack, the issue's sequence: the runtime refuses the stack's
machines, takes any name its rule allows (the seed's ``<owner>-<pool>-<n>`` too) while the
stack's are ``<owner>-<pool>-<n>.stack``, ``max`` holds (for a plain ``pulumi up`` too), a
preview names the autoscaler machines a pool removal deletes, removing one pool reaps only
that pool, a machine deleted behind the stack's back fails neither a plain ``pulumi up``
(the project refreshes first, ``Pulumi.yaml``'s ``options: refresh: always``) nor the
automation's, concurrent resizes all succeed, and an operator's plain ``pulumi destroy``
leaves nothing of the stack's owner while another owner's machines and a bystander stay.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading

import pytest
import yaml
from hcloud.images import Image
from hcloud.server_types import ServerType

from emulator.process import PROJECT_ROOT
from machines import MachineSpec, StackMachineError, automation
from machines.runtime.pool import pools_of
from machines.runtime.provider import Provider
from testkit.commands import operator_pulumi

pytestmark = pytest.mark.engine

POOLS = "orca-machines:pools"
LAB = {"name": "lab", "machineType": "cx23", "location": "fsn1", "size": 2}
CI = {"name": "ci", "machineType": "cx23", "location": "fsn1", "size": 1}


def spec(name: str, pool: str = "lab") -> MachineSpec:
    return MachineSpec(name=name, machine_type="cx23", location="fsn1", pool=pool)


def live(deployment) -> dict[str, dict[str, str]]:
    """Every server the cloud has that is not being deleted, by name, with its labels."""
    return {s.name: s.labels for s in deployment.hcloud.servers.get_all() if s.status != "deleting"}


def set_pools(*pools: dict[str, object]) -> None:
    automation.set_config("local", {POOLS: list(pools)})


def operator(deployment, *args: str) -> subprocess.CompletedProcess[str]:
    return operator_pulumi(deployment.project, deployment.state, "local", *args)


@pytest.fixture(scope="module")
def autoscaler(deployment) -> Provider:
    """The autoscaler's provider, configured by the stack (kind, owner ``exp``, settings)."""
    return automation.provider("local")


def test_the_stack_labels_the_machines_it_keeps(deployment):
    automation.set_config("local", {"orca-machines:owner": "exp"})
    set_pools(LAB, CI)
    automation.up("local")
    found = live(deployment)
    assert set(found) == {"exp-lab-1.stack", "exp-lab-2.stack", "exp-ci-1.stack"}
    for labels in found.values():
        assert labels["orca-managed-by"] == "pulumi"
        assert labels["orca-owner"] == "exp"


def test_bystanders_exist_that_nothing_here_may_touch(deployment):
    image = Image(name="ubuntu-24.04")
    other = {"orca": "pool", "orca-pool": "lab", "orca-owner": "other"}
    deployment.hcloud.servers.create(
        name="other-lab-a1", server_type=ServerType(name="cx23"), image=image, labels=other
    )
    deployment.hcloud.servers.create(
        name="bystander", server_type=ServerType(name="cx23"), image=image
    )
    assert {"other-lab-a1", "bystander"} <= set(live(deployment))


def test_the_autoscaler_tells_the_stacks_machines_from_its_own(deployment, autoscaler):
    created = autoscaler.create(spec("lab-a9"))
    assert created.ok, created.reason
    kinds = {m.name: m.managed_by for m in autoscaler.machines("lab")}
    assert kinds == {"exp-lab-1.stack": "pulumi", "exp-lab-2.stack": "pulumi", "lab-a9": ""}


def test_the_autoscaler_takes_the_seeds_names_beside_the_stacks(deployment, autoscaler):
    created = autoscaler.create(spec("exp-lab-1"))
    assert created.ok, created.reason
    assert created.machine is not None
    assert {"exp-lab-1", "exp-lab-1.stack"} <= set(live(deployment))
    assert autoscaler.delete(created.machine.id)
    assert not automation.preview("local").has_changes


def test_the_runtime_refuses_to_delete_a_stack_machine(deployment, autoscaler):
    (kept,) = [m for m in autoscaler.machines("lab") if m.name == "exp-lab-1.stack"]
    deployment.emulator.control.reset_requests()
    with pytest.raises(StackMachineError) as refused:
        autoscaler.delete(kept.id)
    message = str(refused.value)
    assert "exp-lab-1.stack" in message
    # the stack by its name (its env output says it), never its owner taken for a stack
    assert "is kept by stack local (" in message
    assert "lower the size of pool lab in stack local (orca-machines resize local lab " in message
    assert "stack exp" not in message
    assert deployment.emulator.control.requests().total == 1
    assert "exp-lab-1.stack" in live(deployment)
    rm = subprocess.run(
        [sys.executable, "-m", "machines", "rm", kept.id, "--stack", "local"],
        cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert rm.returncode == 1
    assert "is kept by stack local (" in rm.stderr
    assert "(orca-machines resize local lab <size>)" in rm.stderr


def test_a_pools_max_holds_for_both_kinds(deployment):
    set_pools({**LAB, "max": 4}, CI)
    automation.up("local")
    assert pools_of(automation.runtime_env("local"))["lab"].max == 4
    autoscaler = automation.provider("local")
    assert autoscaler.pool_max == {"lab": 4}
    assert autoscaler.create(spec("lab-a10")).ok
    refused = autoscaler.create(spec("lab-a11"))
    assert refused.failed
    assert "pool lab has 4 machines, the max stack local sets for it" in refused.reason
    assert "stack exp" not in refused.reason
    assert "(4," in refused.reason
    assert "lab-a11" not in live(deployment)


def test_an_up_growing_a_pool_past_its_max_with_the_autoscalers_machines_is_refused(deployment):
    before = set(live(deployment))  # lab at its max of 4: the stack's two, the autoscaler's
    set_pools({**LAB, "size": 3, "max": 4}, CI)

    previewed = automation.preview("local")
    with pytest.raises(automation.StackAtMaxError) as refused:
        automation.up("local")

    (warned,) = previewed.warnings  # the CI comment's, before anyone runs the up
    assert warned.startswith("pool lab has 4 machines now, and its size 3 would add 1 of the")
    assert "past its max 4: up would be refused" in warned
    assert f"warning: {warned}" in previewed.text()

    assert "\n" not in str(refused.value)
    assert "pool lab has 4 machines, counted over every process" in str(refused.value)
    assert "past its max 4: nothing was changed" in str(refused.value)
    assert set(live(deployment)) == before
    set_pools({**LAB, "max": 4}, CI)


def test_a_plain_pulumi_up_growing_a_pool_past_its_max_is_refused_by_its_program(deployment):
    """An operator's plain ``pulumi up`` asks the same fence (the stack's backend) before
    its program declares anything: one line, nothing made; a plain preview, which makes
    nothing, still shows the plan."""
    before = set(live(deployment))  # lab at its max of 4: the stack's two, the autoscaler's
    set_pools({**LAB, "size": 3, "max": 4}, CI)

    preview = operator(deployment, "preview")
    plain = operator(deployment, "up", "--yes", "--skip-preview")

    assert preview.returncode == 0, preview.stdout + preview.stderr
    assert "1 to create" in preview.stdout, preview.stdout
    assert plain.returncode != 0, plain.stdout
    said = plain.stdout + plain.stderr
    assert "stack local: pool lab has 4 machines, counted over every process" in said, said
    assert "past its max 4: nothing was changed" in said, said
    assert set(live(deployment)) == before
    set_pools({**LAB, "max": 4}, CI)


def test_the_state_never_holds_the_token_in_plain(deployment):
    token = os.environ["HCLOUD_TOKEN"]
    texts = [p.read_text(errors="replace") for p in deployment.state.rglob("*") if p.is_file()]
    assert texts
    assert not any(token in text for text in texts)


def test_the_preview_of_a_pool_removal_names_the_autoscaler_machines_it_deletes(deployment):
    created = automation.provider("local").create(spec("ci-a1", "ci"))
    assert created.ok, created.reason
    set_pools(CI)
    diff = automation.preview("local")
    pools = {p.pool: p for p in diff.pools}
    assert (pools["lab"].kept, pools["lab"].autoscaled, pools["lab"].deletes) == (2, 2, 4)
    assert pools["lab"].reaped == ("lab-a10", "lab-a9")
    assert (pools["ci"].kept, pools["ci"].autoscaled, pools["ci"].deletes) == (1, 1, 0)
    markdown = diff.markdown()
    assert "| `lab` | 2 → 0 | 2 | 4 | `lab-a10`, `lab-a9` |" in markdown
    assert "pool lab: 2 → 0 kept by the stack, 2 made by the autoscaler, 4 to delete" in diff.text()
    assert {"lab-a9", "lab-a10", "exp-lab-1.stack"} <= set(live(deployment))


def test_removing_one_pool_reaps_only_that_pool(deployment):
    automation.up("local")
    found = live(deployment)
    assert not [name for name in found if "lab" in name and name != "other-lab-a1"]
    assert {"exp-ci-1.stack", "ci-a1", "other-lab-a1", "bystander"} <= set(found)


def test_a_machine_deleted_behind_the_stacks_back_fails_neither_a_plain_up_nor_the_automations(
    deployment,
):
    set_pools({**LAB, "size": 1}, CI)
    automation.up("local")
    (server,) = [s for s in deployment.hcloud.servers.get_all() if s.name == "exp-lab-1.stack"]
    deployment.hcloud.servers.delete(server)
    set_pools(CI)
    plain = operator(deployment, "up", "--yes", "--skip-preview")
    assert plain.returncode == 0, plain.stdout + plain.stderr
    automation.up("local")
    pools = automation.outputs("local")["pools"]
    assert isinstance(pools, dict)
    assert list(pools) == ["ci"]


def test_concurrent_resizes_of_one_stack_all_succeed_after_a_deletion_by_hand(deployment):
    set_pools(CI, {**LAB, "size": 0})
    automation.up("local")
    (by_hand,) = [s for s in deployment.hcloud.servers.get_all() if s.name == "exp-ci-1.stack"]
    deployment.hcloud.servers.delete(by_hand)
    sizes = [("lab", 2), ("ci", 2), ("lab", 1)]
    failures: list[BaseException] = []

    def resize(pool: str, size: int) -> None:
        try:
            automation.resize("local", pool, size, on_output=lambda _line: None)
        except BaseException as error:
            failures.append(error)

    threads = [threading.Thread(target=resize, args=args) for args in sizes]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    config = yaml.safe_load((deployment.project / "stacks" / "Pulumi.local.yaml").read_text())
    wanted = {p["name"]: p["size"] for p in config["config"][POOLS]}
    assert wanted["ci"] == 2
    assert wanted["lab"] in (1, 2)
    found = live(deployment)
    for pool, size in wanted.items():
        assert {n for n in found if n.startswith(f"exp-{pool}-")} == {
            f"exp-{pool}-{n}.stack" for n in range(1, size + 1)
        }


def test_resize_from_the_command_line_applies_that_pool(deployment):
    done = subprocess.run(
        [sys.executable, "-m", "machines", "resize", "local", "ci", "1", "-q"],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("stack local: pool ci size 1: ")
    assert "1 deleted" in done.stdout
    assert not [n for n in live(deployment) if n.startswith("exp-ci-") and n != "exp-ci-1.stack"]


def test_an_operators_destroy_leaves_nothing_of_the_owner(deployment, autoscaler):
    assert autoscaler.create(spec("lab-a20")).ok
    destroyed = operator(deployment, "destroy", "--yes", "--skip-preview")
    assert destroyed.returncode == 0, destroyed.stdout + destroyed.stderr
    found = live(deployment)
    assert set(found) == {"other-lab-a1", "bystander"}
    assert found["other-lab-a1"]["orca-owner"] == "other"
