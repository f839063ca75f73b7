"""Images the project makes: snapshots and backups of servers, beside the catalogue's system
images (`catalogue/data.py`).

`create_image` on a server makes an image of `type` snapshot (or backup, bound to the
server and deleted with it) with the server's architecture, its disk size, `created_from`
the server, and status `creating` until its `create_image` action ends, then `available`
(with an `image_size`). Snapshots have no name: they are found by id or by labels. The
control API can seed available snapshots of either architecture without a server.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from emulator.errors import ApiError, invalid_input, not_found
from emulator.resources.catalogue import data as catalogue

if TYPE_CHECKING:
    from emulator.project import Project
    from emulator.resources.actions.state import Action
    from emulator.resources.servers.state import Server

FIRST_ID = 300_000_001
ImageKind = Literal["snapshot", "backup"]
IMAGE_KINDS: tuple[str, ...] = ("snapshot", "backup")
IMAGE_FILE_RATIO = 0.06  # the compressed image file's GB per GB of disk (emulated)


@dataclass
class Snapshot:
    """A snapshot or backup image of a server's disk."""

    id: int
    type: ImageKind
    description: str
    labels: dict[str, str]
    created: float
    architecture: str
    disk_size: int
    os_flavor: str
    os_version: str | None
    created_from: tuple[int, str] | None  # (server id, server name)
    bound_to: int | None = None  # the server a backup belongs to
    status: Literal["creating", "available"] = "creating"
    delete_protected: bool = False
    image_size: float | None = field(default=None)

    @property
    def name(self) -> None:
        """None: snapshots and backups have no name (they are found by id or labels)."""
        return None


AnyImage = catalogue.Image | Snapshot


class Images:
    """The project's snapshots and backups."""

    def __init__(self, project: Project) -> None:
        self.project = project
        self.by_id: dict[int, Snapshot] = {}
        self._ids = itertools.count(FIRST_ID)

    def get(self, image_id: int) -> AnyImage:
        """Any image by id: the project's, or a system image of the catalogue."""
        found: AnyImage | None = self.by_id.get(image_id) or catalogue.image(image_id)
        if found is None:
            raise not_found("image", image_id)
        return found

    def own(self, image_id: int) -> Snapshot:
        """One of the project's images by id; a system image cannot be changed or deleted."""
        image = self.get(image_id)
        if not isinstance(image, Snapshot):
            raise ApiError("forbidden", "system images cannot be changed or deleted")
        return image

    def for_create(self, ref: int | str, architecture: str) -> AnyImage:
        """The image a server create names by id or name, checked as the real API does."""
        image: AnyImage | None
        if isinstance(ref, int):
            image = self.by_id.get(ref) or catalogue.image(ref)
        else:
            image = catalogue.image(ref)
        if image is None:
            raise invalid_input(f"image '{ref}' not found")
        if image.architecture != architecture:
            raise invalid_input("image has incompatible architecture")
        if isinstance(image, Snapshot) and image.status != "available":
            raise invalid_input(f"image {image.id} is not available")
        return image

    def snapshot(
        self,
        server: Server,
        kind: ImageKind,
        description: str | None,
        labels: dict[str, str],
    ) -> tuple[Snapshot, Action]:
        """Image a server's disk: `creating` until its create_image action ends."""
        project = self.project
        actions = project.actions
        if actions.running_on(server.id, "server"):
            raise ApiError("locked", "server is locked: another action is running")
        source = server.image
        image = self._added(
            Snapshot(
                id=next(self._ids),
                type=kind,
                description=description or f"{server.name}-{project.now:.0f}",
                labels=labels,
                created=project.now,
                architecture=server.server_type.architecture,
                disk_size=server.disk,
                os_flavor=source.os_flavor,
                os_version=source.os_version,
                created_from=(server.id, server.name),
                bound_to=server.id if kind == "backup" else None,
            )
        )
        action = actions.start(
            "create_image",
            [(server.id, "server"), (image.id, "image")],
            project.timing.action,
            self._made_available(image.id),
            on_error=self._dropped(image.id),
        )
        return image, action

    def seed(
        self,
        *,
        architecture: str,
        labels: dict[str, str],
        description: str,
        created: float,
        disk_size: int,
        kind: ImageKind = "snapshot",
        os_flavor: str = "ubuntu",
        os_version: str | None = None,
        creating: bool = False,
    ) -> Snapshot:
        """An image made without a server (control API): available, or held ``creating``
        until ``finish`` (a snapshot still being made, as the real API lists it)."""
        made = (kind, description, labels, created, architecture, disk_size, os_flavor, os_version)
        image = self._added(Snapshot(next(self._ids), *made, created_from=None))
        if not creating:
            self._made_available(image.id)()
        return image

    def finish(self, image_id: int) -> Snapshot:
        """A held ``creating`` image made available (control API)."""
        if image_id not in self.by_id:
            raise not_found("image", image_id)
        self._made_available(image_id)()
        return self.by_id[image_id]

    def _added(self, image: Snapshot) -> Snapshot:
        self.by_id[image.id] = image
        return image

    def _made_available(self, image_id: int) -> Callable[[], None]:
        def apply() -> None:
            image = self.by_id.get(image_id)
            if image is not None:
                image.status = "available"
                image.image_size = round(image.disk_size * IMAGE_FILE_RATIO, 2)

        return apply

    def _dropped(self, image_id: int) -> Callable[[], None]:
        def apply() -> None:
            self.by_id.pop(image_id, None)

        return apply

    def update(
        self,
        image_id: int,
        description: str | None,
        labels: dict[str, str] | None,
        kind: str | None,
    ) -> Snapshot:
        """Change an image's description or labels, or turn a backup into a snapshot."""
        image = self.own(image_id)
        if kind is not None:
            if kind != "snapshot":
                raise invalid_input("an image can only be changed to type snapshot")
            image.type = "snapshot"
            image.bound_to = None
        if description is not None:
            image.description = description
        if labels is not None:
            image.labels = labels
        return image

    def delete(self, image_id: int) -> None:
        """Delete a snapshot or backup (servers made from it keep running)."""
        image = self.own(image_id)
        if image.delete_protected:
            raise ApiError("protected", "image deletion is protected")
        del self.by_id[image.id]

    def server_gone(self, server_id: int) -> None:
        """Drop the backups bound to a deleted server; its snapshots stay."""
        for image in [i for i in self.by_id.values() if i.bound_to == server_id]:
            del self.by_id[image.id]

    def reset(self) -> None:
        """Drop every snapshot and backup (ids keep counting up)."""
        self.by_id.clear()
