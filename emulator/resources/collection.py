"""What every resource's state shares: its resources by id, ids counting up, not-found by id,
and, for named resources, unique names, renaming, relabelling and deleting.

A resource's state class (`resources/<name>/state.py`) subclasses `Collection` (or
`NamedCollection`) and names its `kind` (as `not_found` says it) and its first id, as moto's
backends each keep one dict per resource.
"""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING, ClassVar, Generic, Protocol, TypeVar

from emulator.errors import not_found, uniqueness

if TYPE_CHECKING:
    from emulator.project import Project


class Identified(Protocol):
    """A stored resource: it has an id."""

    @property
    def id(self) -> int:
        """Its id, unique within its kind."""


class Named(Protocol):
    """A resource with a name (unique within its kind) and labels that PUT may change."""

    id: int
    name: str
    labels: dict[str, str]


I = TypeVar("I", bound=Identified)  # noqa: E741 - the stored item's type
N = TypeVar("N", bound=Named)


class Collection(Generic[I]):
    """The project's resources of one kind, by id; ids keep counting up across resets."""

    kind: ClassVar[str]  # the resource as `not_found` names it: "ssh_key"
    first_id: ClassVar[int]

    def __init__(self, project: Project) -> None:
        self.project = project
        self.by_id: dict[int, I] = {}
        self._ids = itertools.count(self.first_id)

    def get(self, item_id: int) -> I:
        """One resource by id; not_found when there is none."""
        if item_id not in self.by_id:
            raise not_found(self.kind, item_id)
        return self.by_id[item_id]

    def _added(self, item: I) -> I:
        self.by_id[item.id] = item
        return item

    def reset(self) -> None:
        """Drop every resource of the kind (ids keep counting up)."""
        self.by_id.clear()


class NamedCollection(Collection[N]):
    """Resources whose names are unique within the kind."""

    name_taken: ClassVar[str]  # the uniqueness error's words

    def check_name(self, name: str) -> None:
        """uniqueness_error when another resource of the kind has this name."""
        if any(item.name == name for item in self.by_id.values()):
            raise uniqueness("name", self.name_taken)

    def update(self, item_id: int, name: str | None, labels: dict[str, str] | None) -> N:
        """Rename a resource and/or replace its labels."""
        item = self.get(item_id)
        if name is not None and name != item.name:
            self.check_name(name)
            item.name = name
        if labels is not None:
            item.labels = labels
        return item

    def delete(self, item_id: int) -> None:
        """Delete a resource, unless `check_deletable` refuses."""
        item = self.get(item_id)
        self.check_deletable(item)
        del self.by_id[item.id]

    def check_deletable(self, item: N) -> None:
        """Raise the kind's error when `item` may not be deleted (by default it may)."""
