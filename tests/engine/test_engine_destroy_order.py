"""A destroy deletes the machines that use a shared resource before it, the autoscaler's
too: the official hcloud plugin on the emulator, through the CLI an operator runs.

A pool in the stack's network and placement group with a machine the autoscaler made: the
pool's reaper deletes it before the subnet, network and group go (the plugin would retry
the subnet's delete for twenty minutes while a server is in it). What the stack cannot
delete, a server of someone else in its network, stops the destroy within a minute in one
line naming the subnet.
"""

from __future__ import annotations

import pytest
from hcloud.images import Image
from hcloud.locations import Location
from hcloud.server_types import ServerType

from machines import automation
from machines.automation.state import resources
from machines.program.reaper import REAPER_TYPE, unordered
from testkit.commands import machines_cli
from testkit.specs import hetzner_pool, spec

pytestmark = pytest.mark.engine

POOL = hetzner_pool({"network": "ci", "placementGroup": "spread"})


def up_with_an_autoscaler_machine(deployment) -> str:
    """The local stack up with POOL in its own network and group, and the autoscaler's
    machine of the pool made: its id."""
    automation.set_config(
        "local",
        {
            "orca-machines:networks": [{"name": "ci"}],
            "orca-machines:placementGroups": [{"name": "spread"}],
            "orca-machines:pools": [POOL],
        },
    )
    automation.up("local")
    made = automation.provider("local").create(spec("x86-7", pool="x86"))
    assert made.machine is not None, made.reason
    return made.machine.id


def test_a_destroy_deletes_the_autoscalers_machine_before_the_network_and_group(deployment):
    hcloud = deployment.hcloud
    up_with_an_autoscaler_machine(deployment)

    done = machines_cli("destroy", "local", "--yes")

    assert done.returncode == 0, done.stderr
    assert "2 deleted (1 kept by the stack, 1 made by the autoscaler)" in done.stdout
    assert hcloud.servers.get_all() == []
    assert hcloud.networks.get_all() == []
    assert hcloud.placement_groups.get_all() == []


def test_a_destroy_held_by_a_server_of_someone_else_says_so_within_a_minute(deployment):
    """The subnet's delete is bounded (a minute, where the plugin retries for twenty), and
    the error is one line naming it; the destroy ends once that server is gone."""
    hcloud = deployment.hcloud
    up_with_an_autoscaler_machine(deployment)
    [network] = hcloud.networks.get_all(name="local-ci")
    other = hcloud.servers.create(
        "someone-else",
        server_type=ServerType(name="cx23"),
        image=Image(name="ubuntu-24.04"),
        location=Location(name="fsn1"),
        networks=[network],
    ).server

    held = machines_cli("destroy", "local", "--yes")

    assert held.returncode == 1
    [line] = [x for x in held.stderr.splitlines() if x.startswith("orca-machines: error:")]
    assert "NetworkSubnet local-ci-subnet could not be deleted in time" in line
    assert "something the stack does not manage still uses it" in line
    assert "context deadline exceeded" not in line
    assert [s.name for s in hcloud.servers.get_all()] == ["someone-else"]
    hcloud.servers.get_by_id(other.id).delete()
    done = machines_cli("destroy", "local", "--yes")
    assert done.returncode == 0, done.stderr


def test_an_up_that_removes_the_pools_network_deletes_the_autoscalers_machine_first(deployment):
    """The pool stays and leaves the network, which the stack stops making: its reaper is
    replaced, so the autoscaler's machine in the network goes before the subnet does; the
    stack's own server is moved out of it by the plugin."""
    hcloud = deployment.hcloud
    up_with_an_autoscaler_machine(deployment)
    automation.set_config(
        "local",
        {
            "orca-machines:networks": [],
            "orca-machines:placementGroups": [],
            "orca-machines:pools": [{**POOL, "hetzner": {}}],
        },
    )

    preview = machines_cli("preview", "local", "--diff")
    done = machines_cli("up", "local")

    assert (
        "pool x86: 1 kept by the stack, 1 made by the autoscaler, 1 to delete (x86-7 of the "
        in (preview.stdout)
    )
    assert done.returncode == 0, done.stderr
    assert [s.name for s in hcloud.servers.get_all()] == ["local-x86-1.stack"]
    assert hcloud.networks.get_all() == []
    assert hcloud.placement_groups.get_all() == []
    automation.destroy("local")


def test_a_stack_whose_reapers_predate_the_order_is_told_to_up_before_a_destroy(deployment):
    """A checkpoint written before reapers depended on the shared resources: the destroy
    refuses before deleting anything, and one unchanged ``up`` records the order."""
    hcloud = deployment.hcloud
    up_with_an_autoscaler_machine(deployment)
    stack = automation.select("local")
    exported = stack.export_stack()
    for resource in exported.deployment["resources"]:
        if resource["type"] == REAPER_TYPE:
            resource["inputs"].pop("shared", None)
            resource["outputs"].pop("shared", None)
            resource["dependencies"] = []
            resource.pop("propertyDependencies", None)
    stack.import_stack(exported)

    held = machines_cli("destroy", "local", "--yes")

    assert held.returncode == 1
    assert "the reapers of pool(s) x86 were recorded by an older orca-machines" in held.stderr
    assert "run `orca-machines up local` once" in held.stderr
    assert len(hcloud.servers.get_all()) == 2, "nothing was deleted"

    assert machines_cli("up", "local", "-q").returncode == 0
    assert unordered(resources(automation.select("local").export_stack().deployment)) == []
    done = machines_cli("destroy", "local", "--yes")
    assert done.returncode == 0, done.stderr
    assert hcloud.servers.get_all() == []
    assert hcloud.networks.get_all() == []
