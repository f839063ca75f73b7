"""Snapshots through the official hcloud client: create_image from a server, listing by
label selector and architecture newest first (as the cluster-autoscaler picks its image),
booting from a snapshot by id, the wrong architecture refused, deleting, and the schema."""

from __future__ import annotations

import pytest
from hcloud import APIException, Client
from hcloud.images import BoundImage, Image
from hcloud.locations import Location
from hcloud.server_types import ServerType
from hcloud.servers import BoundServer

from emulator import Emulator
from testkit.api_schema import conform
from testkit.hetzner import RawApi


def booted(hcloud: Client, name: str = "builder", server_type: str = "cx23") -> BoundServer:
    arch = "arm" if server_type.startswith("cax") else "x86"
    image = hcloud.images.get_by_name_and_architecture("ubuntu-24.04", arch)
    made = hcloud.servers.create(
        name=name,
        server_type=ServerType(name=server_type),
        image=image,
        location=Location(name="fsn1"),
    )
    made.action.wait_until_finished()
    return hcloud.servers.get_by_id(made.server.id)


def test_create_image_makes_a_snapshot_that_becomes_available(
    hcloud: Client, emulator_api: RawApi
) -> None:
    source = booted(hcloud, server_type="cax11")

    made = source.create_image(description="worker v1", labels={"orca-image": "worker"})

    assert made.image.type == "snapshot"
    assert made.image.status == "creating"
    assert made.action.command == "create_image"
    made.action.wait_until_finished()
    image = hcloud.images.get_by_id(made.image.id)
    assert (image.status, image.architecture, image.description) == (
        "available",
        "arm",
        "worker v1",
    )
    assert image.name is None
    assert image.created_from.id == source.id
    assert image.disk_size == 40
    assert image.image_size is not None
    assert image.image_size > 0
    assert image.labels == {"orca-image": "worker"}
    conform("image", emulator_api.get(f"/images/{image.id}").json()["image"])


def test_snapshots_by_label_selector_and_architecture_newest_first(
    hcloud: Client, emulator: Emulator
) -> None:
    seed = emulator.control.add_image
    old_x86 = seed(architecture="x86", labels={"role": "worker"}, created="2026-01-01T00:00:00Z")
    new_x86 = seed(architecture="x86", labels={"role": "worker"}, created="2026-06-01T00:00:00Z")
    seed(architecture="arm", labels={"role": "worker"}, created="2026-07-01T00:00:00Z")
    seed(architecture="x86", labels={"role": "db"}, created="2026-08-01T00:00:00Z")

    found = hcloud.images.get_all(
        type=["snapshot"],
        label_selector="role=worker",
        architecture=["x86"],
        sort=["created:desc"],
    )

    assert [i.id for i in found] == [new_x86, old_x86]
    oldest_first = hcloud.images.get_all(type=["snapshot"], sort=["created:asc"])
    assert [i.created for i in oldest_first] == sorted(i.created for i in oldest_first)
    assert [i.id for i in hcloud.images.get_all(type=["snapshot"], sort=["id:desc"])][-1] == (
        old_x86
    )


def test_system_images_are_not_snapshots(
    hcloud: Client, emulator: Emulator, emulator_api: RawApi
) -> None:
    snapshot = emulator.control.add_image(architecture="x86")

    systems = hcloud.images.get_all(type=["system"])
    snapshots = hcloud.images.get_all(type=["snapshot"])
    # hcloud-python 2.27.0 sends per_page as `status` (images/client.py), so raw HTTP here
    creating = emulator_api.get("/images", params={"status": "creating"}).json()["images"]

    assert snapshot not in {i.id for i in systems}
    assert [i.id for i in snapshots] == [snapshot]
    assert creating == []
    assert hcloud.images.get_all(name="ubuntu-24.04", type=["snapshot"]) == []


def test_a_server_boots_from_a_snapshot_by_id(hcloud: Client, emulator: Emulator) -> None:
    snapshot = emulator.control.add_image(architecture="arm", labels={"role": "worker"})

    made = hcloud.servers.create(
        name="w-1",
        server_type=ServerType(name="cax11"),
        image=Image(id=snapshot),
        location=Location(name="fsn1"),
    )

    read = hcloud.servers.get_by_id(made.server.id)
    assert (read.image.id, read.image.type) == (snapshot, "snapshot")


def test_a_snapshot_of_the_other_architecture_is_refused(
    hcloud: Client, emulator: Emulator
) -> None:
    snapshot = emulator.control.add_image(architecture="arm")

    with pytest.raises(APIException) as excinfo:
        hcloud.servers.create(
            name="w-1",
            server_type=ServerType(name="cx23"),
            image=Image(id=snapshot),
            location=Location(name="fsn1"),
        )

    assert excinfo.value.code == "invalid_input"
    assert excinfo.value.message == "image has incompatible architecture"
    assert hcloud.servers.get_all() == []


def test_a_snapshot_still_creating_cannot_boot_a_server(hcloud: Client, emulator: Emulator) -> None:
    source = booted(hcloud)
    emulator.control.set_timing(0.2, action_seconds=3600)  # creating until the reset
    made = source.create_image()

    with pytest.raises(APIException) as excinfo:
        hcloud.servers.create(
            name="w-1",
            server_type=ServerType(name="cx23"),
            image=Image(id=made.image.id),
            location=Location(name="fsn1"),
        )

    assert excinfo.value.code == "invalid_input"


def test_a_seeded_snapshot_can_be_held_creating_until_finished(
    hcloud: Client, emulator: Emulator
) -> None:
    """The control API's snapshot still being made: listed as creating, not bootable, until
    made available."""
    held = emulator.control.add_image(labels={"role": "w"}, status="creating")

    listed = hcloud.images.get_all(type=["snapshot"], label_selector="role=w")
    with pytest.raises(APIException) as excinfo:
        hcloud.servers.create(
            name="w-1",
            server_type=ServerType(name="cx23"),
            image=Image(id=held),
            location=Location(name="fsn1"),
        )
    emulator.control.finish_image(held)

    assert [(i.id, i.status) for i in listed] == [(held, "creating")]
    assert excinfo.value.code == "invalid_input"
    assert hcloud.images.get_by_id(held).status == "available"


def test_a_snapshot_can_be_relabelled_and_deleted(hcloud: Client, emulator: Emulator) -> None:
    image = hcloud.images.get_by_id(emulator.control.add_image(labels={"role": "worker"}))

    image.update(description="old", labels={"role": "retired"})
    retired = hcloud.images.get_all(label_selector="role=retired")
    assert image.delete() is True

    assert [i.id for i in retired] == [image.id]
    with pytest.raises(APIException) as excinfo:
        hcloud.images.get_by_id(image.id)
    assert excinfo.value.code == "not_found"


def test_a_system_image_cannot_be_deleted(hcloud: Client) -> None:
    system = hcloud.images.get_by_name_and_architecture("ubuntu-24.04", "x86")
    assert isinstance(system, BoundImage)

    with pytest.raises(APIException) as excinfo:
        system.delete()

    assert excinfo.value.code == "forbidden"


def test_a_backup_is_bound_to_its_server_and_goes_with_it(hcloud: Client) -> None:
    source = booted(hcloud)
    made = source.create_image(type="backup")
    made.action.wait_until_finished()

    bound = hcloud.images.get_all(type=["backup"], bound_to=[str(source.id)])
    source.delete().wait_until_finished()

    assert [(i.id, i.bound_to.id) for i in bound] == [(made.image.id, source.id)]
    assert hcloud.images.get_all(type=["backup"]) == []


def test_every_listed_image_fits_the_published_schema(
    emulator_api: RawApi, emulator: Emulator
) -> None:
    emulator.control.add_image(architecture="arm", labels={"role": "worker"})

    body = emulator_api.get("/images", params={"include_deprecated": "true", "per_page": 50})

    images = body.json()["images"]
    assert {i["type"] for i in images} == {"system", "snapshot"}
    for image in images:
        conform("image", image)
