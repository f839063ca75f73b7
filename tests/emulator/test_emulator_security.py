"""SSH keys and firewalls: create, find by name, update, apply, delete."""

from __future__ import annotations

import base64
import os
import struct

import pytest
from hcloud import APIException, Client
from hcloud.firewalls import FirewallResource, FirewallResourceLabelSelector, FirewallRule
from hcloud.images import Image
from hcloud.server_types import ServerType
from hcloud.ssh_keys import SSHKey

from emulator import Emulator


def public_key(comment: str = "me@host") -> str:
    """A well-formed (random) ed25519 public key."""
    kind = b"ssh-ed25519"
    blob = struct.pack(">I", len(kind)) + kind + struct.pack(">I", 32) + os.urandom(32)
    return f"ssh-ed25519 {base64.b64encode(blob).decode()} {comment}"


SSH_RULE = FirewallRule(
    direction="in", protocol="tcp", port="22", source_ips=["0.0.0.0/0", "::/0"], description="ssh"
)


def test_an_ssh_key_can_be_created_found_by_name_and_deleted(hcloud: Client) -> None:
    created = hcloud.ssh_keys.create(name="deploy", public_key=public_key(), labels={"team": "ops"})

    found = hcloud.ssh_keys.get_by_name("deploy")
    assert found.id == created.id
    assert found.labels == {"team": "ops"}
    assert len(found.fingerprint.split(":")) == 16

    hcloud.ssh_keys.delete(found)
    assert hcloud.ssh_keys.get_by_name("deploy") is None


def test_ssh_key_names_and_fingerprints_are_unique(hcloud: Client) -> None:
    key = public_key()
    hcloud.ssh_keys.create(name="one", public_key=key)

    with pytest.raises(APIException) as same_name:
        hcloud.ssh_keys.create(name="one", public_key=public_key())
    with pytest.raises(APIException) as same_key:
        hcloud.ssh_keys.create(name="two", public_key=key)

    assert same_name.value.code == same_key.value.code == "uniqueness_error"


def test_a_malformed_public_key_is_invalid_input(hcloud: Client) -> None:
    with pytest.raises(APIException) as excinfo:
        hcloud.ssh_keys.create(name="bad", public_key="ssh-ed25519 not-base64!")

    assert excinfo.value.code == "invalid_input"


def test_a_server_with_an_ssh_key_gets_no_root_password(hcloud: Client) -> None:
    key = hcloud.ssh_keys.create(name="deploy", public_key=public_key())

    created = hcloud.servers.create(
        name="web-1",
        server_type=ServerType(name="cx23"),
        image=Image(name="ubuntu-24.04"),
        ssh_keys=[SSHKey(name=key.name)],
    )

    assert created.root_password is None


def test_an_unknown_ssh_key_is_invalid_input(hcloud: Client) -> None:
    with pytest.raises(APIException) as excinfo:
        hcloud.servers.create(
            name="web-1",
            server_type=ServerType(name="cx23"),
            image=Image(name="ubuntu-24.04"),
            ssh_keys=[SSHKey(name="nope")],
        )

    assert excinfo.value.code == "invalid_input"


def test_a_firewall_can_be_created_found_renamed_and_deleted(hcloud: Client) -> None:
    created = hcloud.firewalls.create(name="web", rules=[SSH_RULE], labels={"a": "b"})

    firewall = hcloud.firewalls.get_by_name("web")
    assert firewall.id == created.firewall.id
    assert firewall.rules[0].port == "22"
    assert firewall.rules[0].source_ips == ["0.0.0.0/0", "::/0"]

    hcloud.firewalls.update(firewall, name="web-2")
    assert hcloud.firewalls.get_by_name("web-2") is not None
    assert hcloud.firewalls.delete(firewall) is True
    assert hcloud.firewalls.get_all() == []


def test_firewall_rules_are_checked(hcloud: Client) -> None:
    bad = FirewallRule(direction="in", protocol="tcp", port="99999", source_ips=["0.0.0.0/0"])

    with pytest.raises(APIException) as excinfo:
        hcloud.firewalls.create(name="bad", rules=[bad])

    assert excinfo.value.code == "invalid_input"


def test_set_rules_replaces_the_rules(hcloud: Client) -> None:
    firewall = hcloud.firewalls.create(name="web", rules=[SSH_RULE]).firewall
    http = FirewallRule(direction="in", protocol="tcp", port="80-443", source_ips=["::/0"])

    for action in hcloud.firewalls.set_rules(firewall, [http]):
        action.wait_until_finished()

    assert [r.port for r in hcloud.firewalls.get_by_id(firewall.id).rules] == ["80-443"]


def test_a_firewall_applied_by_label_selector_shows_on_matching_servers(
    hcloud: Client, emulator: Emulator
) -> None:
    emulator.control.add_servers(2, name_prefix="web-", labels={"role": "web"})
    emulator.control.add_servers(1, name_prefix="db-", labels={"role": "db"})
    firewall = hcloud.firewalls.create(name="web", rules=[SSH_RULE]).firewall
    selector = FirewallResource(
        type="label_selector", label_selector=FirewallResourceLabelSelector("role=web")
    )

    hcloud.firewalls.apply_to_resources(firewall, [selector])

    web = hcloud.servers.get_by_name("web-1")
    db = hcloud.servers.get_by_name("db-1")
    assert [f.firewall.id for f in web.public_net.firewalls] == [firewall.id]
    assert db.public_net.firewalls == []
    applied = hcloud.firewalls.get_by_id(firewall.id).applied_to[0]
    assert {r.server.id for r in applied.applied_to_resources} == {
        s.id for s in hcloud.servers.get_all(label_selector="role=web")
    }


def test_a_firewall_in_use_cannot_be_deleted_until_removed(
    hcloud: Client, emulator: Emulator
) -> None:
    emulator.control.add_servers(1)
    server = hcloud.servers.get_by_name("server-1")
    firewall = hcloud.firewalls.create(name="web", rules=[SSH_RULE]).firewall
    target = FirewallResource(type="server", server=server)
    hcloud.firewalls.apply_to_resources(firewall, [target])

    with pytest.raises(APIException) as in_use:
        hcloud.firewalls.delete(firewall)
    with pytest.raises(APIException) as twice:
        hcloud.firewalls.apply_to_resources(firewall, [target])
    removals = hcloud.firewalls.remove_from_resources(firewall, [target])
    with pytest.raises(APIException) as still_removing:
        hcloud.firewalls.delete(firewall)
    for action in removals:
        action.wait_until_finished()

    assert in_use.value.code == "resource_in_use"
    assert twice.value.code == "firewall_already_applied"
    assert still_removing.value.code == "resource_in_use"
    assert hcloud.firewalls.delete(firewall) is True
