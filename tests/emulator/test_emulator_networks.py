"""Private networks through the official hcloud client: networks and subnets, attaching at
create, the private address read back, public addresses off, and the published schema."""

from __future__ import annotations

import pytest
from hcloud import APIException, Client
from hcloud.images import Image
from hcloud.locations import Location
from hcloud.networks import BoundNetwork, Network, NetworkSubnet
from hcloud.server_types import ServerType
from hcloud.servers import CreateServerResponse, ServerCreatePublicNetwork

from testkit.api_schema import conform
from testkit.hetzner import RawApi


def network(hcloud: Client, name: str = "ci", zone: str = "eu-central") -> BoundNetwork:
    return hcloud.networks.create(
        name=name,
        ip_range="10.0.0.0/16",
        subnets=[NetworkSubnet(type="cloud", network_zone=zone, ip_range="10.0.1.0/24")],
        labels={"orca": "pool"},
    )


def server(
    hcloud: Client,
    name: str,
    *,
    networks: list[BoundNetwork] | None = None,
    location: str = "fsn1",
    server_type: str = "cx23",
    public_net: ServerCreatePublicNetwork | None = None,
    start_after_create: bool = True,
) -> CreateServerResponse:
    return hcloud.servers.create(
        name=name,
        server_type=ServerType(name=server_type),
        image=Image(name="ubuntu-24.04"),
        location=Location(name=location),
        networks=list(networks or []),
        public_net=public_net,
        start_after_create=start_after_create,
    )


def test_a_network_with_a_subnet_reads_back_as_created(
    hcloud: Client, emulator_api: RawApi
) -> None:
    made = network(hcloud)

    found = hcloud.networks.get_by_name("ci")

    assert found is not None
    assert found.id == made.id
    assert found.ip_range == "10.0.0.0/16"
    assert [(s.type, s.network_zone, s.ip_range, s.gateway) for s in found.subnets] == [
        ("cloud", "eu-central", "10.0.1.0/24", "10.0.0.1")
    ]
    assert found.servers == []
    conform("network", emulator_api.get(f"/networks/{made.id}").json()["network"])


def test_networks_list_by_name_and_label_selector(hcloud: Client) -> None:
    network(hcloud, "ci")
    hcloud.networks.create(name="other", ip_range="192.168.0.0/24", labels={"orca": "x"})

    assert [n.name for n in hcloud.networks.get_all(label_selector="orca=pool")] == ["ci"]
    assert [n.name for n in hcloud.networks.get_all(name="other")] == ["other"]
    with pytest.raises(APIException) as excinfo:
        network(hcloud, "ci")
    assert excinfo.value.code == "uniqueness_error"


def test_add_and_delete_subnet_are_actions(hcloud: Client) -> None:
    made = network(hcloud)
    subnet = NetworkSubnet(type="cloud", network_zone="us-east", ip_range="10.0.2.0/24")

    made.add_subnet(subnet).wait_until_finished()
    zones = [s.network_zone for s in hcloud.networks.get_by_id(made.id).subnets]
    made.delete_subnet(subnet).wait_until_finished()

    assert zones == ["eu-central", "us-east"]
    assert [s.network_zone for s in hcloud.networks.get_by_id(made.id).subnets] == ["eu-central"]


@pytest.mark.parametrize(
    ("ip_range", "subnet_range"),
    [
        ("8.8.0.0/16", "8.8.1.0/24"),  # not private
        ("10.0.0.0/16", "10.1.0.0/24"),  # subnet outside the network
        ("10.0.0.0/25", "10.0.0.0/26"),  # a network smaller than /24
    ],
)
def test_a_bad_range_is_invalid_input(hcloud: Client, ip_range: str, subnet_range: str) -> None:
    with pytest.raises(APIException) as excinfo:
        hcloud.networks.create(
            name="bad",
            ip_range=ip_range,
            subnets=[NetworkSubnet(type="cloud", network_zone="eu-central", ip_range=subnet_range)],
        )
    assert excinfo.value.code == "invalid_input"


def test_a_server_attached_at_create_reads_back_its_private_ip(
    hcloud: Client, emulator_api: RawApi
) -> None:
    net = network(hcloud)

    first = server(hcloud, "w-1", networks=[net]).server
    second = server(hcloud, "w-2", networks=[net]).server

    read = hcloud.servers.get_by_id(first.id)
    assert [(p.network.id, p.ip) for p in read.private_net] == [(net.id, "10.0.1.2")]
    assert hcloud.servers.get_by_id(second.id).private_net[0].ip == "10.0.1.3"
    assert hcloud.networks.get_by_id(net.id).servers[0].id == first.id
    assert {s.id for s in hcloud.networks.get_by_id(net.id).servers} == {first.id, second.id}
    body = emulator_api.get(f"/servers/{first.id}").json()["server"]
    for entry in body["private_net"]:
        conform("private_net", entry)


def test_a_deleted_server_leaves_its_network(hcloud: Client) -> None:
    net = network(hcloud)
    made = server(hcloud, "w-1", networks=[net])

    made.server.delete().wait_until_finished()

    assert hcloud.networks.get_by_id(net.id).servers == []


def test_a_network_without_a_subnet_in_the_locations_zone_is_refused(hcloud: Client) -> None:
    net = network(hcloud, zone="us-east")

    with pytest.raises(APIException) as excinfo:
        server(hcloud, "w-1", networks=[net], location="fsn1")

    assert excinfo.value.code == "invalid_input"
    assert "eu-central" in excinfo.value.message
    assert hcloud.servers.get_all() == []
    made = server(hcloud, "w-2", networks=[net], location="ash", server_type="cpx22").server
    assert hcloud.servers.get_by_id(made.id).private_net[0].ip == "10.0.1.2"


def test_an_unknown_network_is_refused(hcloud: Client) -> None:
    with pytest.raises(APIException) as excinfo:
        server(hcloud, "w-1", networks=[BoundNetwork(hcloud.networks, {"id": 999})])

    assert excinfo.value.code == "invalid_input"
    assert hcloud.servers.get_all() == []


def test_ipv4_off_leaves_the_server_without_an_ipv4(hcloud: Client) -> None:
    made = server(hcloud, "w-1", public_net=ServerCreatePublicNetwork(enable_ipv4=False))

    read = hcloud.servers.get_by_id(made.server.id)

    assert read.public_net.ipv4 is None
    assert read.public_net.ipv6 is not None
    assert [ip.type for ip in hcloud.primary_ips.get_all()] == ["ipv6"]


def test_both_addresses_off_needs_a_network(hcloud: Client) -> None:
    off = ServerCreatePublicNetwork(enable_ipv4=False, enable_ipv6=False)
    with pytest.raises(APIException) as excinfo:
        server(hcloud, "w-1", public_net=off)
    assert excinfo.value.code == "invalid_input"

    net = network(hcloud)
    private = server(hcloud, "w-2", public_net=off, networks=[net]).server
    unstarted = server(hcloud, "w-3", public_net=off, start_after_create=False).server

    read = hcloud.servers.get_by_id(private.id)
    assert (read.public_net.ipv4, read.public_net.ipv6) == (None, None)
    assert read.private_net[0].ip == "10.0.1.2"
    assert hcloud.servers.get_by_id(unstarted.id).public_net.ipv4 is None
    assert hcloud.primary_ips.get_all() == []


def test_deleting_a_network_detaches_its_servers(hcloud: Client) -> None:
    net = network(hcloud)
    made = server(hcloud, "w-1", networks=[net]).server

    hcloud.networks.delete(Network(id=net.id))

    assert hcloud.servers.get_by_id(made.id).private_net == []
    with pytest.raises(APIException) as excinfo:
        hcloud.networks.get_by_id(net.id)
    assert excinfo.value.code == "not_found"


def test_a_server_attaches_after_create_as_the_official_provider_does(hcloud: Client) -> None:
    net = network(hcloud)
    off = ServerCreatePublicNetwork(enable_ipv4=False, enable_ipv6=False)
    made = server(hcloud, "w-1", public_net=off, start_after_create=False)
    made.action.wait_until_finished()

    made.server.attach_to_network(
        net, ip="10.0.1.20", alias_ips=["10.0.1.21"]
    ).wait_until_finished()
    made.server.power_on().wait_until_finished()

    read = hcloud.servers.get_by_id(made.server.id)
    assert read.status == "running"
    assert [(p.ip, p.alias_ips) for p in read.private_net] == [("10.0.1.20", ["10.0.1.21"])]
    with pytest.raises(APIException) as excinfo:
        made.server.attach_to_network(net)
    assert excinfo.value.code == "server_already_attached"

    made.server.change_alias_ips(net, alias_ips=[]).wait_until_finished()
    assert hcloud.servers.get_by_id(made.server.id).private_net[0].alias_ips == []
    made.server.detach_from_network(net).wait_until_finished()
    assert hcloud.servers.get_by_id(made.server.id).private_net == []
    assert hcloud.networks.get_by_id(net.id).servers == []


def test_attaching_without_a_subnet_in_the_zone_is_no_subnet_available(hcloud: Client) -> None:
    net = network(hcloud, zone="us-east")
    made = server(hcloud, "w-1")

    with pytest.raises(APIException) as excinfo:
        made.server.attach_to_network(net)

    assert excinfo.value.code == "no_subnet_available"
    assert hcloud.servers.get_by_id(made.server.id).private_net == []


def test_a_subnet_with_servers_cannot_be_deleted(hcloud: Client) -> None:
    net = network(hcloud)
    server(hcloud, "w-1", networks=[net])

    with pytest.raises(APIException) as excinfo:
        net.delete_subnet(NetworkSubnet(type="cloud", ip_range="10.0.1.0/24", network_zone=""))

    assert excinfo.value.code == "service_error"
    assert "attached resources" in excinfo.value.message
    assert len(hcloud.networks.get_by_id(net.id).subnets) == 1
