"""Through the real engine and the hcloud plugin: machines of the old name form are renamed in
place, a type change resizes servers in place, a resize applies its pool only, an
architecture change is refused before anything is touched, and destroy detaches a firewall
from every server (the runtime's too) before deleting it.

One stack is reused across the module's tests, which run in order.
"""

from __future__ import annotations

import pytest

from machines import MachineSpec, automation
from machines.automation import EngineError

pytestmark = pytest.mark.engine

SERVER = "hcloud:index/server:Server"
X86, ARM = "orca-machines:pools[0].machineType", "orca-machines:pools[1].machineType"


def servers(deployment) -> dict[str, tuple[int, str, str]]:
    """Each server's id, type and status by name."""
    return {
        s.name: (s.id, s.server_type.name, s.status) for s in deployment.hcloud.servers.get_all()
    }


def test_up_makes_the_pools(deployment):
    automation.up("local")
    assert {name: kind for name, (_, kind, _) in servers(deployment).items()} == {
        "local-x86-1.stack": "cx23",
        "local-x86-2.stack": "cx23",
        "local-arm-1.stack": "cax11",
    }


def test_machines_of_the_old_name_form_are_renamed_in_place_as_the_preview_says(deployment):
    before = servers(deployment)
    for server in deployment.hcloud.servers.get_all():
        deployment.hcloud.servers.update(server, name=server.name.removesuffix(".stack"))
    automation.refresh("local", on_output=lambda _line: None)

    diff = automation.preview("local", refresh=False)

    changed = sorted((c.op, c.name, c.keys) for c in diff.changes if c.type == SERVER)
    assert changed == [
        ("update", "local-arm-1", ("name",)),
        ("update", "local-x86-1", ("name",)),
        ("update", "local-x86-2", ("name",)),
    ]
    assert diff.counts["replace"] == 0
    text = diff.text()
    assert "pool x86: 2 kept by the stack" in text
    assert "2 of the stack's machines renamed in place from <owner>-x86-<n>" in text
    automation.up("local")
    assert servers(deployment) == before


def test_a_machine_type_change_previews_as_an_update(deployment):
    automation.set_config("local", {X86: "cx33"}, path=True)

    diff = automation.preview("local")

    servers_changed = [(c.op, c.name, c.keys) for c in diff.changes if c.type == SERVER]
    assert sorted(servers_changed) == [
        ("update", "local-x86-1", ("serverType",)),
        ("update", "local-x86-2", ("serverType",)),
    ]


def test_up_resizes_the_same_servers(deployment):
    before = servers(deployment)

    automation.up("local")

    after = servers(deployment)
    for name in ("local-x86-1.stack", "local-x86-2.stack"):
        assert after[name] == (before[name][0], "cx33", "running")
    assert after["local-arm-1.stack"] == before["local-arm-1.stack"]
    assert not automation.preview("local").has_changes


def test_a_resize_applies_its_pool_only_and_says_what_stays_pending(deployment):
    before = servers(deployment)
    automation.set_config("local", {X86: "cx43"}, path=True)
    try:
        diff = automation.resize("local", "arm", 2, on_output=lambda _line: None)
    finally:
        automation.set_config("local", {X86: "cx33"}, path=True)

    after = servers(deployment)
    assert [(c.op, c.name) for c in diff.changes if c.type == SERVER] == [("create", "local-arm-2")]
    assert after["local-arm-2.stack"][1] == "cax11"
    for name in ("local-x86-1.stack", "local-x86-2.stack"):
        assert after[name] == before[name], "the other pool's pending type change waits"
    assert sorted((c.op, c.name) for c in diff.pending if c.type == SERVER) == [
        ("update", "local-x86-1"),
        ("update", "local-x86-2"),
    ]
    note = diff.pending_note()
    assert note.startswith("stack local: 2 change(s) elsewhere left pending, not applied")
    assert "apply with orca-machines up local" in note
    assert "\n" not in note


def test_an_architecture_change_is_refused_before_anything_is_touched(deployment):
    before = servers(deployment)
    deployment.emulator.control.reset_requests()
    automation.set_config("local", {ARM: "cx23"}, path=True)
    try:
        with pytest.raises(EngineError, match="refused before anything is touched"):
            automation.up("local")
    finally:
        automation.set_config("local", {ARM: "cax11"}, path=True)

    assert servers(deployment) == before
    routes = deployment.emulator.control.requests().routes
    assert not [r for r in routes if r.startswith("POST /v1/servers/{id}/actions")]


def test_destroy_detaches_the_firewall_from_the_runtimes_machines_too(deployment):
    """The runtime's machine is of a pool the stack does not have, so no reaper deletes it:
    destroy must take the firewall off it before deleting the firewall."""
    provider = automation.provider("local")
    assert provider.firewall == "local-pools"
    made = provider.create(
        MachineSpec(name="local-batch-a9", machine_type="cx23", location="fsn1", pool="batch")
    )
    assert made.ok, made.reason
    assert made.machine is not None
    [firewall] = deployment.hcloud.firewalls.get_all()
    assert {r.server.id for r in firewall.applied_to} == {
        server_id for server_id, _, _ in servers(deployment).values()
    }

    automation.destroy("local")

    assert deployment.hcloud.firewalls.get_all() == []
    [left] = deployment.hcloud.servers.get_all()
    assert (str(left.id), left.public_net.firewalls) == (made.machine.id, [])
    assert provider.delete(made.machine.id) is True
