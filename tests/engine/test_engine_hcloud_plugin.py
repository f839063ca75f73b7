"""The official hcloud plugin's error paths, through the engine against the emulator.

What terraform-provider-hcloud v1.66.1 (under pulumi-hcloud 1.39.1) does when the API says
no: hcloud-go retries ``rate_limit_exceeded`` and ``conflict`` itself; a taken name
(``uniqueness_error``), a ``locked`` server and a failed action fail the update with the
API's words. One stack is reused
across the module's tests, which run in order.
"""

from __future__ import annotations

import pytest

from machines import Status, automation
from machines.automation import EngineError
from machines.runtime.labels import machine_name

pytestmark = pytest.mark.engine

X86_TYPE = "orca-machines:pools[0].machineType"
X86_SIZE = "orca-machines:pools[0].size"
SERVER = "hcloud:index/server:Server"


def servers(deployment) -> dict[str, tuple[int, str, str]]:
    """Each server's id, type and status by name."""
    return {
        s.name: (s.id, s.server_type.name, s.status) for s in deployment.hcloud.servers.get_all()
    }


def test_throttling_and_conflicts_are_retried_by_the_plugin(deployment):
    deployment.emulator.control.set_faults(
        [
            {
                "kind": "error",
                "method": "POST",
                "path": "/v1/servers",
                "status": 429,
                "code": "rate_limit_exceeded",
                "message": "limit of 3600 requests per hour reached",
                "times": 1,
            },
            {
                "kind": "error",
                "method": "POST",
                "path": "/v1/ssh_keys",
                "status": 409,
                "code": "conflict",
                "message": "resource is being changed",
                "times": 1,
            },
        ]
    )
    try:
        automation.up("local")
    finally:
        deployment.emulator.control.clear_faults()

    assert sorted(servers(deployment)) == sorted(
        [
            machine_name("local", "x86", 1),
            machine_name("local", "x86", 2),
            machine_name("local", "arm", 1),
        ]
    )
    assert deployment.emulator.control.faults() == []


def test_a_name_taken_by_another_server_fails_the_up_with_the_apis_words(deployment):
    taken = machine_name("local", "x86", 3)
    squatter = deployment.hcloud.servers.create(
        name=taken,
        server_type=deployment.hcloud.server_types.get_by_name("cx23"),
        image=deployment.hcloud.images.get_by_name_and_architecture("ubuntu-24.04", "x86"),
    ).server
    automation.set_config("local", {X86_SIZE: "3"}, path=True)

    with pytest.raises(EngineError, match="uniqueness_error|already"):
        automation.up("local")

    assert servers(deployment)[taken][0] == squatter.id
    deployment.hcloud.servers.delete(squatter)
    automation.up("local")
    assert servers(deployment)[taken][0] != squatter.id


def test_a_failed_create_action_fails_the_up_and_leaves_the_machine_failed(deployment):
    """The plugin keeps the server in the state (the bridge's partial create), as the API
    left it: off; the runtime tells such a machine by its failed create action."""
    automation.set_config("local", {X86_SIZE: "4"}, path=True)
    deployment.emulator.control.set_action_failures(
        [{"command": "create_server", "message": "host failed", "times": 1}]
    )

    with pytest.raises(EngineError, match="host failed"):
        automation.up("local")

    fourth = machine_name("local", "x86", 4)
    assert servers(deployment)[fourth][2] == "off"
    listed = {m.name: m.status for m in automation.provider("local").machines("x86")}
    assert listed[fourth] == Status.FAILED


def test_the_preview_and_the_next_up_replace_the_failed_machine(deployment):
    fourth = machine_name("local", "x86", 4)
    failed_id = servers(deployment)[fourth][0]
    said: list[str] = []

    diff = automation.preview("local", on_output=said.append)

    key = fourth.partition(".")[0]
    assert [(c.op, c.name) for c in diff.changes if c.type == SERVER] == [("replace", key)]
    assert any("replacing 1 of the stack's machines the cloud could not make" in s for s in said)

    automation.up("local")

    replaced = servers(deployment)[fourth]
    assert replaced[0] != failed_id
    assert replaced[2] == "running"
    assert not automation.preview("local").has_changes


def test_a_locked_server_fails_the_type_change_and_the_next_up_applies_it(deployment):
    deployment.emulator.control.set_faults(
        [
            {
                "kind": "error",
                "method": "POST",
                "path_regex": r"/v1/servers/\d+/actions/poweroff",
                "status": 423,
                "code": "locked",
                "message": "server is locked",
                "times": 1,
            }
        ]
    )
    automation.set_config("local", {X86_TYPE: "cx33"}, path=True)
    try:
        with pytest.raises(EngineError, match="locked"):
            automation.up("local")
    finally:
        deployment.emulator.control.clear_faults()

    automation.up("local")

    x86 = {n: s for n, s in servers(deployment).items() if n.startswith("local-x86")}
    assert {kind for _, kind, _ in x86.values()} == {"cx33"}
    assert not automation.preview("local").has_changes


def test_destroy_removes_everything_the_stack_made(deployment):
    automation.destroy("local")

    assert servers(deployment) == {}
    assert deployment.hcloud.firewalls.get_all() == []
    assert deployment.hcloud.ssh_keys.get_all() == []
