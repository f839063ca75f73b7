"""A pool's Hetzner options (``ORCA_POOLS``) on the runtime's servers, against the emulator,
read back with hcloud-python: public addresses, the private network and the address reported
without public ones, the spread placement group and its limit, the image by name, id and
label selector, extra labels; and bad options refused before ``POST /servers``."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hcloud import Client
from hcloud.networks import NetworkSubnet
from hcloud.placement_groups import PlacementGroup

from emulator.process import Emulator
from machines import Provider, SettingsError
from machines.runtime.pool import Pool
from testkit.specs import OWNER, spec


def pools(monkeypatch: pytest.MonkeyPatch, *, max: int | None = None, **hetzner: Any) -> None:
    """``ORCA_POOLS`` with pool ``ci`` of these Hetzner options."""
    pool: dict[str, Any] = {"name": "ci", "hetzner": hetzner}
    if max is not None:
        pool["max"] = max
    monkeypatch.setenv("ORCA_POOLS", json.dumps([pool]))


def network(hcloud: Client, name: str = "ci") -> int:
    """A network with a subnet in eu-central (fsn1, nbg1, hel1): its id."""
    made = hcloud.networks.create(
        name=name,
        ip_range="10.0.0.0/16",
        subnets=[NetworkSubnet(ip_range="10.0.1.0/24", network_zone="eu-central", type="cloud")],
    )
    assert made.id is not None
    return made.id


def create(**fields: str) -> str:
    created = Provider.of("hetzner", OWNER).create(spec(**fields))
    assert created.machine is not None, created.reason
    return created.machine.id


@pytest.mark.usefixtures("hetzner_env")
def test_ipv6_only_servers_have_no_ipv4_and_report_their_ipv6(
    hcloud: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    pools(monkeypatch, ipv4=False)

    server = hcloud.servers.get_by_id(int(create()))

    assert server.public_net is not None
    assert server.public_net.ipv4 is None
    assert server.public_net.ipv6 is not None
    [listed] = Provider.of("hetzner", OWNER).machines("ci")
    assert listed.address == server.public_net.ipv6.ip


@pytest.mark.usefixtures("hetzner_env")
def test_a_server_without_public_addresses_joins_its_network_and_reports_its_private_address(
    hcloud: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    network_id = network(hcloud)
    pools(monkeypatch, ipv4=False, ipv6=False, network="ci")

    created = Provider.of("hetzner", OWNER).create(spec())

    assert created.machine is not None, created.reason
    server = hcloud.servers.get_by_id(int(created.machine.id))
    assert server.public_net is None or (
        server.public_net.ipv4 is None and server.public_net.ipv6 is None
    )
    [private] = server.private_net or []
    assert private.network.id == network_id
    assert created.machine.address == private.ip
    assert private.ip.startswith("10.0.1.")


@pytest.mark.usefixtures("hetzner_env")
def test_a_pool_in_a_placement_group_has_its_servers_there(
    hcloud: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    group = hcloud.placement_groups.create(name="spread", type=PlacementGroup.TYPE_SPREAD)
    pools(monkeypatch, placementGroup="spread", max=10)

    server = hcloud.servers.get_by_id(int(create()))

    assert server.placement_group is not None
    assert server.placement_group.id == group.placement_group.id


@pytest.mark.usefixtures("hetzner_env")
@pytest.mark.parametrize("max", [None, 11, 50])
def test_a_spread_pool_without_a_max_of_ten_or_less_is_refused_when_loaded(
    monkeypatch: pytest.MonkeyPatch, max: int | None
) -> None:
    """Hetzner puts at most 10 servers in a spread group: a pool that could pass that is
    refused when the settings are read, not at its 11th create."""
    pools(monkeypatch, placementGroup="spread", max=max)

    with pytest.raises(SettingsError, match="spread placement group.*set the pool's max to 10"):
        Provider.of("hetzner", OWNER)


@pytest.mark.usefixtures("hetzner_env")
def test_pools_sharing_a_group_may_not_pass_ten_together(monkeypatch: pytest.MonkeyPatch) -> None:
    options = {"placementGroup": "spread"}
    monkeypatch.setenv(
        "ORCA_POOLS",
        json.dumps(
            [
                {"name": "a", "max": 6, "hetzner": options},
                {"name": "b", "max": 6, "hetzner": options},
            ]
        ),
    )

    with pytest.raises(SettingsError, match="pools a, b share placement group spread.*12"):
        Provider.of("hetzner", OWNER)


@pytest.mark.usefixtures("hetzner_env")
def test_the_image_by_selector_is_the_newest_snapshot_of_the_types_architecture(
    hcloud: Client, emulator: Emulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    labels = {"role": "ci-worker"}
    emulator.control.add_image(labels=labels, created="2026-01-01T00:00:00+00:00")
    newest = emulator.control.add_image(labels=labels, created="2026-06-01T00:00:00+00:00")
    arm = emulator.control.add_image(
        architecture="arm", labels=labels, created="2026-03-01T00:00:00+00:00"
    )
    pools(monkeypatch, imageSelector="role=ci-worker", labels={"team": "ci"})

    x86 = hcloud.servers.get_by_id(int(create(name="ci-1", machine_type="cx23")))
    arm64 = hcloud.servers.get_by_id(int(create(name="ci-2", machine_type="cax11")))

    assert x86.image is not None
    assert x86.image.id == newest
    assert arm64.image is not None
    assert arm64.image.id == arm
    assert (x86.labels or {})["team"] == "ci"
    assert (x86.labels or {})["orca-pool"] == "ci"


@pytest.mark.usefixtures("hetzner_env")
def test_the_image_by_selector_is_the_newest_available_snapshot_never_one_being_made(
    hcloud: Client, emulator: Emulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As the cluster-autoscaler asks for available snapshots only: a newer one still
    ``creating`` cannot boot a server, so every create would fail until it is made."""
    labels = {"role": "ci-worker"}
    available = emulator.control.add_image(labels=labels, created="2026-01-01T00:00:00+00:00")
    emulator.control.add_image(
        labels=labels, created="2026-06-01T00:00:00+00:00", status="creating"
    )
    pools(monkeypatch, imageSelector="role=ci-worker")

    server = hcloud.servers.get_by_id(int(create(name="ci-1", machine_type="cx23")))

    assert server.image is not None
    assert server.image.id == available


@pytest.mark.usefixtures("hetzner_env")
def test_a_selector_whose_only_snapshot_is_being_made_says_so(
    emulator: Emulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    emulator.control.add_image(labels={"role": "ci-worker"}, status="creating")
    pools(monkeypatch, imageSelector="role=ci-worker")

    created = Provider.of("hetzner", OWNER).create(spec(machine_type="cx23"))

    assert created.failed
    assert "matches no available snapshot for amd64" in created.reason
    assert "still being made" in created.reason


@pytest.mark.usefixtures("hetzner_env")
def test_the_image_by_id_is_used(
    hcloud: Client, emulator: Emulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    image = emulator.control.add_image(labels={"role": "ci"})
    pools(monkeypatch, image=str(image))

    server = hcloud.servers.get_by_id(int(create(machine_type="cx23")))

    assert server.image is not None
    assert server.image.id == image


@pytest.mark.usefixtures("hetzner_env")
def test_extra_labels_never_override_the_orca_labels(monkeypatch: pytest.MonkeyPatch) -> None:
    pools(monkeypatch, labels={"orca-pool": "other"})

    with pytest.raises(SettingsError, match="orca-pool is orca's own label"):
        Provider.of("hetzner", OWNER)


@pytest.mark.usefixtures("hetzner_env")
def test_both_addresses_off_without_a_network_is_refused_naming_the_key(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pools(monkeypatch, ipv4=False, ipv6=False)

    with pytest.raises(SettingsError, match="hetzner: ipv4 and ipv6 are both false"):
        Provider.of("hetzner", OWNER)


@pytest.mark.usefixtures("hetzner_env")
@pytest.mark.parametrize(
    ("options", "machine_type", "expected"),
    [
        ({"network": "nope"}, "cx23", "pool ci: hetzner.network 'nope' is no network"),
        (
            {"placementGroup": "nope", "max": 5},
            "cx23",
            "pool ci: hetzner.placementGroup 'nope' is no placement group",
        ),
        ({"image": "no-such-image"}, "cx23", "no image 'no-such-image' for amd64"),
        ({"image": "999999"}, "cx23", "pool ci: hetzner.image 999999 is no image"),
        (
            {"imageSelector": "role=arm-only"},
            "cx23",
            "matches no snapshot for amd64 (there is one for arm64 only)",
        ),
    ],
)
def test_a_bad_option_fails_naming_the_key_before_any_server_is_made(
    emulator: Emulator,
    hcloud: Client,
    monkeypatch: pytest.MonkeyPatch,
    options: dict[str, Any],
    machine_type: str,
    expected: str,
) -> None:
    emulator.control.add_image(architecture="arm", labels={"role": "arm-only"})
    pools(monkeypatch, **options)
    provider = Provider.of("hetzner", OWNER)

    created = provider.create(spec(machine_type=machine_type))

    assert created.failed
    assert expected in created.reason
    assert hcloud.servers.get_all() == []


@pytest.mark.usefixtures("hetzner_env")
def test_a_snapshot_of_the_other_architecture_by_id_is_refused(
    emulator: Emulator, hcloud: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    arm = emulator.control.add_image(architecture="arm")
    pools(monkeypatch, image=str(arm))

    created = Provider.of("hetzner", OWNER).create(spec(machine_type="cx23"))

    assert created.failed
    assert f"hetzner.image {arm} is an image for arm64, but cx23 is amd64" in created.reason
    assert hcloud.servers.get_all() == []


@pytest.mark.usefixtures("hetzner_env")
def test_ec2_options_on_a_hetzner_pool_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ORCA_POOLS", json.dumps([{"name": "ci", "ec2": {"shutdown": "stop"}}]))

    with pytest.raises(SettingsError, match="pool ci has ec2 options, but this provider is"):
        Provider.of("hetzner", OWNER)


@pytest.mark.usefixtures("hetzner_env")
@pytest.mark.parametrize(
    ("options", "expected"),
    [
        (
            {"labels": {"team": "a" * 70}},
            "hetzner.labels: the value of label 'team' has 70 characters, more than Hetzner's 63",
        ),
        ({"labels": {"-team": "ci"}}, "hetzner.labels: label key '-team' has a character"),
        ({"labels": {"hetzner.cloud/x": "ci"}}, "has Hetzner's own prefix hetzner.cloud/"),
        (
            {"imageSelector": "role=="},
            "hetzner.imageSelector: 'role==' cannot be read as a label selector: term 'role==' "
            "has no value",
        ),
        ({"imageSelector": "role in (a"}, "its parentheses do not pair up"),
        ({"imageSelector": "role=ci,"}, "an empty term"),
    ],
)
def test_labels_and_selectors_hetzner_cannot_take_are_refused_when_loaded(
    monkeypatch: pytest.MonkeyPatch, options: dict[str, Any], expected: str
) -> None:
    """Hetzner refuses such labels at ``POST /servers`` and such selectors at ``GET /images``:
    the pool's settings are refused when read, naming the key, before any request."""
    pools(monkeypatch, **options)

    with pytest.raises(SettingsError) as refused:
        Provider.of("hetzner", OWNER)

    assert expected in str(refused.value)


@pytest.mark.usefixtures("hetzner_env")
def test_a_network_without_a_subnet_in_the_locations_zone_is_refused_before_the_create(
    hcloud: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    hcloud.networks.create(
        name="east",
        ip_range="10.0.0.0/16",
        subnets=[NetworkSubnet(ip_range="10.0.1.0/24", network_zone="us-east", type="cloud")],
    )
    pools(monkeypatch, network="east")

    created = Provider.of("hetzner", OWNER).create(spec(location="fsn1"))

    assert created.failed
    assert created.reason.startswith(
        "pool ci: hetzner.network 'east' has no subnet in network zone eu-central, which holds "
        "location fsn1 (its subnets' zones: us-east): add a subnet in eu-central"
    )
    assert hcloud.servers.get_all() == []


@pytest.mark.usefixtures("hetzner_env")
def test_an_image_id_written_as_a_number_is_the_id(
    hcloud: Client, emulator: Emulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    image = emulator.control.add_image(labels={"role": "ci"})
    pools(monkeypatch, image=image)

    server = hcloud.servers.get_by_id(int(create(machine_type="cx23")))

    assert server.image is not None
    assert server.image.id == image


@pytest.mark.usefixtures("hetzner_env")
def test_a_set_selector_without_a_space_before_its_values_is_read(
    hcloud: Client, emulator: Emulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    image = emulator.control.add_image(labels={"role": "ci-worker"})
    pools(monkeypatch, imageSelector="role in(ci-worker,other)")

    server = hcloud.servers.get_by_id(int(create(machine_type="cx23")))

    assert server.image is not None
    assert server.image.id == image


def test_a_new_snapshot_is_booted_once_the_offers_window_has_passed(
    hcloud: Client, emulator: Emulator, make_clocked_hetzner, clock
) -> None:
    """A long-running autoscaler takes the team's new worker image without a restart: the
    selector's snapshot is read again once ``ORCA_OFFERS_TTL`` has passed, not per create."""
    labels = {"role": "ci-worker"}
    old = emulator.control.add_image(labels=labels, created="2026-01-01T00:00:00+00:00")
    provider = make_clocked_hetzner(ORCA_OFFERS_TTL="60")
    provider.set_pools(
        [Pool.model_validate({"name": "ci", "hetzner": {"imageSelector": "role=ci-worker"}})]
    )

    def booted(name: str) -> int | None:
        made = provider.create(spec(name=name, machine_type="cx23")).machine
        assert made is not None
        image = hcloud.servers.get_by_id(int(made.id)).image
        return None if image is None else image.id

    assert booted("ci-1") == old
    new = emulator.control.add_image(labels=labels, created="2026-06-01T00:00:00+00:00")
    assert booted("ci-2") == old, "within the window: no request for it"
    clock.advance(61)
    assert booted("ci-3") == new
