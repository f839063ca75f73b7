"""A pool's Hetzner server, written once: what the runtime's ``POST /servers`` and the
stack's ``hcloud.Server`` both make for the pool's options
(``machines.runtime.clouds.hetzner.options.HetznerOptions``).

``server`` turns (pool options, the deployment's image, the orca labels) into one ``Server``
shape; the runtime resolves its names to ids and sends them (``provider.py``), the program
declares the same through the official plugin (``publicNets``, ``networks``,
``placementGroupId``, ``getImage``: ``machines.program.clouds.hetzner.components``).
"""

from __future__ import annotations

from dataclasses import dataclass

from machines.runtime.clouds.hetzner.options import HetznerOptions

SNAPSHOT = "snapshot"
NEWEST_FIRST = "created:desc"
"""How an image by label selector is found: snapshots only, the newest first."""
AVAILABLE = "available"
"""The one status of a snapshot a server boots from: the newest *available* one of a
selector is the pool's image (a newer one still ``creating`` is refused at create), as the
cluster-autoscaler picks it."""
SNAPSHOTS_PER_PAGE = 50
"""Snapshots of a selector read at once, newest first, to find the newest available one in
one request. The status is filtered here: hcloud-python 2.27's ``get_list`` sends
``per_page`` as the ``status`` filter, which the API refuses."""


@dataclass(frozen=True)
class ImageChoice:
    """The image a pool's servers boot: by ``id``, by ``name`` (for the type's architecture)
    or the newest snapshot matching ``selector`` for the type's architecture; ``key`` is
    the setting that chose it, for messages."""

    name: str = ""
    id: int | None = None
    selector: str = ""
    key: str = ""
    own: bool = False
    """Whether the pool's own options chose it (``hetzner.image``), not the deployment's."""

    def describe(self) -> str:
        if self.selector:
            return f"the newest available snapshot matching {self.selector!r}"
        return f"image {self.id}" if self.id is not None else f"image {self.name!r}"


@dataclass(frozen=True)
class Server:
    """One pool server's options, for either layer to render."""

    ipv4: bool
    ipv6: bool
    network: str
    placement_group: str
    image: ImageChoice
    labels: dict[str, str]

    @property
    def default_public_net(self) -> bool:
        """Whether both public addresses are on: Hetzner's default, nothing to send."""
        return self.ipv4 and self.ipv6


def image_choice(options: HetznerOptions, deployment_image: str, image_key: str) -> ImageChoice:
    """The pool's ``hetzner.image`` (a number is an id, else a name) or
    ``hetzner.imageSelector``, else the deployment's image (``image_key`` names it)."""
    if options.image_selector:
        return ImageChoice(selector=options.image_selector, key="hetzner.imageSelector", own=True)
    if options.image.isdigit():
        return ImageChoice(id=int(options.image), key="hetzner.image", own=True)
    if options.image:
        return ImageChoice(name=options.image, key="hetzner.image", own=True)
    return ImageChoice(name=deployment_image, key=image_key)


def shape(
    options: HetznerOptions, deployment_image: str, image_key: str, labels: dict[str, str]
) -> Server:
    """The server of a pool with these options: the pool's extra labels first, so the orca
    labels always win."""
    return Server(
        ipv4=options.ipv4,
        ipv6=options.ipv6,
        network=options.network,
        placement_group=options.placement_group,
        image=image_choice(options, deployment_image, image_key),
        labels={**options.labels, **labels},
    )
