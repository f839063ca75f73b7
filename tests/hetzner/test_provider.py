"""The runtime API on Hetzner, against the emulator, checked through the official client.

What every cloud does alike is proven in tests/contract; here is what only Hetzner has.
"""

import pytest

from machines import (
    CloudError,
    InvalidMachineIdError,
    InvalidNameError,
    Provider,
    SettingsError,
    Status,
    UnknownMachineTypeError,
    UnknownProviderError,
)
from machines.runtime.clouds.hetzner.answers import status_of
from machines.runtime.clouds.hetzner.provider import HetznerProvider
from testkit.hetzner import foreign_server
from testkit.specs import OWNER, spec

PUBLIC_KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGk4 ops"


def test_unknown_kind_lists_the_known_ones(hetzner_env):
    with pytest.raises(UnknownProviderError, match="'gce'.*ec2, hetzner"):
        Provider.of("gce")


def test_missing_token_names_the_variable(monkeypatch):
    monkeypatch.delenv("HCLOUD_TOKEN", raising=False)
    with pytest.raises(SettingsError, match="HCLOUD_TOKEN"):
        Provider.of("hetzner")


def test_provider_fields_come_from_settings(hetzner_env, monkeypatch):
    monkeypatch.setenv("ORCA_HCLOUD_SSH_KEYS", "ops,ci")
    monkeypatch.setenv("ORCA_HCLOUD_FIREWALL", "workers")
    provider = Provider.of("hetzner", owner="prod")
    assert (provider.kind, provider.owner, provider.image) == ("hetzner", "prod", "ubuntu-24.04")
    assert isinstance(provider, HetznerProvider)
    assert (provider.ssh_keys, provider.firewall) == (("ops", "ci"), "workers")


def test_unknown_type_raises_and_lists_known_types(hetzner_provider):
    with pytest.raises(UnknownMachineTypeError, match="'cx999'.*cax11"):
        hetzner_provider.arch("cx999")


def test_arch_asks_the_api_once(hetzner_provider, emulator):
    hetzner_provider.arch("cx23")
    emulator.control.reset_requests()
    hetzner_provider.arch("cax11")
    hetzner_provider.arch("cx23")
    assert emulator.control.requests().total == 0


def test_create_makes_a_labelled_server_from_the_image_for_its_arch(hetzner_provider, hcloud):
    created = hetzner_provider.create(spec(machine_type="cax11"))
    assert created.ok, created.reason
    server = hcloud.servers.get_by_id(int(created.machine.id))
    assert server.labels == {"orca": "pool", "orca-pool": "ci", "orca-owner": OWNER}
    assert server.image.name == "ubuntu-24.04"
    assert server.image.architecture == "arm"
    assert server.server_type.name == "cax11"


def test_create_delivers_the_user_data_to_the_server(hetzner_provider, emulator):
    cloud_init = "#cloud-config\nruncmd: [echo hello]\n"
    created = hetzner_provider.create(spec(user_data=cloud_init))
    assert emulator.control.user_data(int(created.machine.id)) == cloud_init


def test_create_without_owner_sets_no_owner_label(hetzner_env, hcloud):
    created = Provider.of("hetzner").create(spec())
    assert hcloud.servers.get_by_id(int(created.machine.id)).labels == {
        "orca": "pool",
        "orca-pool": "ci",
    }


def test_create_uses_the_image_named_in_settings(hetzner_env, monkeypatch, hcloud):
    monkeypatch.setenv("ORCA_HCLOUD_IMAGE", "debian-12")
    created = Provider.of("hetzner", owner=OWNER).create(spec())
    assert hcloud.servers.get_by_id(int(created.machine.id)).image.name == "debian-12"


def test_create_attaches_ssh_keys_and_firewall_by_name(hetzner_env, monkeypatch, hcloud):
    key = hcloud.ssh_keys.create(
        name="ops", public_key="ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGk4 ops"
    )
    firewall = hcloud.firewalls.create(name="workers").firewall
    monkeypatch.setenv("ORCA_HCLOUD_SSH_KEYS", "ops")
    monkeypatch.setenv("ORCA_HCLOUD_FIREWALL", "workers")
    created = Provider.of("hetzner", owner=OWNER).create(spec())
    assert created.ok, created.reason
    server = hcloud.servers.get_by_id(int(created.machine.id))
    assert [f.firewall.id for f in server.public_net.firewalls] == [firewall.id]
    assert key.id is not None


def test_an_unknown_ssh_key_fails_naming_the_setting(hetzner_env, monkeypatch):
    monkeypatch.setenv("ORCA_HCLOUD_SSH_KEYS", "nobody")
    created = Provider.of("hetzner", owner=OWNER).create(spec())
    assert created.failed
    assert "ORCA_HCLOUD_SSH_KEYS" in created.reason


def test_an_unknown_firewall_fails_naming_the_setting(hetzner_env, monkeypatch):
    monkeypatch.setenv("ORCA_HCLOUD_FIREWALL", "nowhere")
    created = Provider.of("hetzner", owner=OWNER).create(spec())
    assert created.failed
    assert "ORCA_HCLOUD_FIREWALL" in created.reason


def test_an_image_missing_for_the_arch_fails_naming_the_setting(hetzner_env, monkeypatch):
    monkeypatch.setenv("ORCA_HCLOUD_IMAGE", "windows-95")
    created = Provider.of("hetzner", owner=OWNER).create(spec())
    assert created.failed
    assert "ORCA_HCLOUD_IMAGE" in created.reason


@pytest.mark.parametrize(
    "code", ["resource_unavailable", "placement_error", "no_space_left_in_location"]
)
def test_no_stock_is_its_own_answer(hetzner_provider, emulator, code):
    emulator.control.set_stock([{"server_type": "cax11", "location": "fsn1", "code": code}])
    created = hetzner_provider.create(spec(machine_type="cax11"))
    assert created.no_stock
    assert "cax11" in created.reason
    assert "fsn1" in created.reason


def test_a_type_not_offered_in_the_location_fails_with_a_reason(hetzner_provider):
    created = hetzner_provider.create(spec(machine_type="cax11", location="ash"))
    assert created.failed
    assert created.reason


def test_a_name_still_held_by_a_machine_being_deleted_is_not_that_machine(
    hetzner_provider, emulator
):
    emulator.control.set_timing(boot_seconds=0, action_seconds=10)
    first = hetzner_provider.create(spec()).machine
    hetzner_provider.delete(first.id)
    again = hetzner_provider.create(spec())
    assert again.failed
    assert "being deleted" in again.reason


def test_a_deleted_machine_is_listed_as_deleting_until_it_is_gone(hetzner_provider, emulator):
    emulator.control.set_timing(boot_seconds=0, action_seconds=10)
    machine = hetzner_provider.create(spec()).machine
    hetzner_provider.delete(machine.id)
    assert [m.status for m in hetzner_provider.machines("ci")] == [Status.DELETING]


def test_a_name_taken_by_another_owner_fails_and_says_so(hetzner_provider, hcloud):
    foreign_server(hcloud, "ci-1", {"orca": "pool", "orca-pool": "ci", "orca-owner": "staging"})
    created = hetzner_provider.create(spec())
    assert created.failed
    assert "ci-1 is taken" in created.reason


def test_machines_reads_every_page_at_50_per_request(hetzner_provider, emulator):
    emulator.control.add_servers(
        count=120,
        name_prefix="bulk",
        server_type="cx23",
        location="fsn1",
        labels={"orca": "pool", "orca-pool": "ci", "orca-owner": OWNER},
    )
    emulator.control.reset_requests()
    assert len(hetzner_provider.machines("ci")) == 120
    assert emulator.control.requests().total == 3


def test_delete_removes_the_machine(hetzner_provider, emulator):
    emulator.control.set_timing(boot_seconds=0, action_seconds=0)
    machine = hetzner_provider.create(spec()).machine
    assert hetzner_provider.delete(machine.id) is True
    assert hetzner_provider.machines("ci") == []


@pytest.mark.parametrize(
    ("hetzner", "shared"),
    [
        ("initializing", Status.STARTING),
        ("starting", Status.STARTING),
        ("running", Status.RUNNING),
        ("stopping", Status.STOPPING),
        ("off", Status.OFF),
        ("deleting", Status.DELETING),
        ("migrating", Status.RUNNING),
        ("rebuilding", Status.STARTING),
        ("unknown", Status.UNKNOWN),
        ("new-thing", Status.UNKNOWN),
    ],
)
def test_hetzner_statuses_map_to_the_shared_vocabulary(hetzner, shared):
    assert status_of(hetzner) == shared


def test_a_wrong_token_is_one_clear_error(hetzner_env, monkeypatch):
    monkeypatch.setenv("HCLOUD_TOKEN", "w" * 64)
    provider = Provider.of("hetzner", owner=OWNER)
    with pytest.raises(CloudError, match="unauthorized.*check HCLOUD_TOKEN") as error:
        provider.machines("ci")
    assert "w" * 64 not in str(error.value)


@pytest.mark.parametrize(
    ("machine_type", "location"), [("cax11", "fsn1"), ("cx23", "hel1"), ("cax11", "hel1")]
)
def test_a_name_held_by_a_machine_of_another_type_or_location_is_not_adopted(
    hetzner_provider, hcloud, machine_type, location
):
    first = hetzner_provider.create(spec()).machine
    asked = hetzner_provider.create(spec(machine_type=machine_type, location=location))
    assert asked.failed
    assert first.id in asked.reason
    assert f"not the {machine_type} in {location}" in asked.reason
    assert len(hcloud.servers.get_all(name="ci-1")) == 1


@pytest.mark.parametrize("machine_id", ["²", "٤٧", "1\n", "007", "", "9" * 30, "-1"])
def test_an_id_that_is_not_an_ascii_number_is_refused_before_any_request(
    hetzner_provider, emulator, machine_id
):
    with pytest.raises(InvalidMachineIdError, match="not a Hetzner server id"):
        hetzner_provider.delete(machine_id)
    assert emulator.control.requests().total == 0


def test_an_id_in_non_ascii_digits_deletes_nothing(hetzner_provider, hcloud):
    made = hetzner_provider.create(spec()).machine
    arabic = "".join(chr(0x0660 + int(d)) for d in made.id)
    with pytest.raises(InvalidMachineIdError):
        hetzner_provider.delete(arabic)
    assert hcloud.servers.get_by_id(int(made.id)).status != "deleting"


@pytest.mark.parametrize("machine_id", [123, None, b"4711"])
def test_an_id_that_is_not_a_string_is_the_packages_error(hetzner_provider, machine_id):
    with pytest.raises(InvalidMachineIdError):
        hetzner_provider.delete(machine_id)


def test_owner_none_is_the_packages_error(hetzner_env):
    with pytest.raises(InvalidNameError, match="owner must be a string"):
        Provider.of("hetzner", owner=None)
