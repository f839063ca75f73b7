"""A resource kind's routes, made once, and the one dispatcher of actions by name.

moto answers every service's requests through one dispatcher that calls the backend's method
named by the action; here a resource declares a `Kind` (its path, its JSON key, where its
state is, its JSON shape, and what it adds: filters, create, update, delete, actions by name)
and `Kind.routes()` makes its `Endpoint`s, in the order the router needs:

    GET    /{plural}                            by name, label_selector, the kind's filters
    POST   /{plural}                            the kind's create handler
    GET    /{plural}/actions[/{id}]             the actions on any resource of the kind
    GET    /{plural}/{id}, PUT, DELETE          one resource; PUT and DELETE with `edits`
                                                (name and/or labels; the store's delete)
                                                or the kind's own `update` / `delete`
    GET    /{plural}/{id}/actions               the resource's actions
    POST   /{plural}/{id}/actions/{name}        dispatched by name: `action_routes`
    GET    /{plural}/{id}/actions/{action_id}   one of the resource's actions

The action routes come only for a kind with actions. Each action name is its own route, so a
request count names it (`POST /v1/servers/{id}/actions/poweron`) and a path under another
method stays a 405. A resource may register actions on another kind's path too (the
networks' `attach_to_network` on servers): `action_routes(plural, singular, handlers)`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from operator import attrgetter
from typing import Any, Generic, Protocol, TypeVar

from emulator.errors import not_found
from emulator.listing import page_response, selector_from, sort_items
from emulator.project import Project, State
from emulator.resources.actions.handlers import action_json, action_listing, ids_from
from emulator.resources.actions.state import Action
from emulator.routing import Endpoint, Json, Request, Response
from emulator.validation import Body, name_and_labels, resource_name


class Resource(Protocol):
    """What the standard list reads of a resource: its name and labels."""

    @property
    def name(self) -> str | None:
        """The name `?name=` matches (None: never matches)."""

    @property
    def labels(self) -> Mapping[str, str]:
        """The labels `?label_selector=` matches."""


T = TypeVar("T", bound=Resource)
T_co = TypeVar("T_co", bound=Resource, covariant=True)


class Store(Protocol[T_co]):
    """A resource's state as the routes reach it: its resources by id, and one by id."""

    @property
    def by_id(self) -> Mapping[int, T_co]:
        """Every resource of the kind (the standard list's candidates)."""

    def get(self, item_id: int) -> T_co:
        """One resource; not_found when there is none."""


class Editable(Store[T_co], Protocol[T_co]):
    """A store with the standard PUT (name and/or labels) and DELETE (`NamedCollection`)."""

    def update(self, item_id: int, name: str | None, labels: dict[str, str] | None) -> T_co:
        """Rename and/or relabel one resource."""

    def delete(self, item_id: int) -> Action | None:
        """Delete one resource (an action, when the deletion takes time)."""


Route = Callable[[State, Request], Response]
ActionResult = Action | list[Action] | Response
ActionHandler = Callable[[Project, int, Json], ActionResult]
"""An action: (project, the path's id, the body) -> the action(s) it started, answered 201
as `action` (or `actions`), or a whole Response; it runs inside the request's transaction."""

BY_ID_NAME_CREATED: Mapping[str, Callable[[Any], Any]] = {
    "id": attrgetter("id"),
    "name": attrgetter("name"),
    "created": attrgetter("created", "id"),
}


def _everything(_: Request) -> Callable[[Any], bool]:
    return lambda _: True


def query_equals(
    param: str, value: Callable[[T], object]
) -> Callable[[Request], Callable[[T], bool]]:
    """A list filter: `?{param}=x` keeps the resources whose `value` is x (absent: all)."""

    def wanted(request: Request) -> Callable[[T], bool]:
        expected = request.first(param)
        return lambda item: expected is None or value(item) == expected

    return wanted


@dataclass(frozen=True)
class Kind(Generic[T]):
    """How one resource kind is served under /v1 (see the module docstring)."""

    plural: str  # its path and its list's key: "networks"
    singular: str  # its object's key, its actions' resource type, its not-found name
    render: Callable[[Project, T], Json]
    store: Callable[[Project], Store[T]] | None = None  # where its state is (or `edits`)
    edits: Callable[[Project], Editable[T]] | None = None  # a store with the standard PUT, DELETE
    read_name: Callable[[Body], str] = resource_name  # how the standard PUT checks a name
    sort_keys: Mapping[str, Callable[[T], Any]] = field(default_factory=lambda: BY_ID_NAME_CREATED)
    filters: Callable[[Request], Callable[[T], bool]] = _everything  # read before the lock
    create: Route | None = None
    lister: Route | None = None  # replaces the standard list
    update: Callable[[Project, int, Json], T] | None = None  # in place of the standard PUT
    delete: Callable[[Project, int], Action | None] | None = None  # in place of the standard
    actions: Mapping[str, ActionHandler] = field(default_factory=dict)

    def routes(self) -> list[Endpoint[State]]:
        """The kind's endpoints, literal paths before parametrised ones."""
        base, one = f"/{self.plural}", f"/{self.plural}/{{id}}"
        routes = [Endpoint("GET", base, self.lister or self._list)]
        if self.create is not None:
            routes.append(Endpoint("POST", base, self.create))
        if self.actions:
            routes.append(Endpoint("GET", f"{base}/actions", self._kind_actions))
            routes.append(Endpoint("GET", f"{base}/actions/{{id}}", self._kind_action))
        routes.append(Endpoint("GET", one, self._get))
        if self.update is not None or self.edits is not None:
            routes.append(Endpoint("PUT", one, self._update))
        if self.delete is not None or self.edits is not None:
            routes.append(Endpoint("DELETE", one, self._delete))
        if self.actions:
            routes.append(Endpoint("GET", f"{one}/actions", self._actions))
            routes.extend(action_routes(self.plural, self.singular, self.actions))
            routes.append(Endpoint("GET", f"{one}/actions/{{action_id}}", self._action))
        return routes

    def _state(self, project: Project) -> Store[T]:
        found = self.edits or self.store
        if found is None:
            raise TypeError(f"{self.plural}: a Kind needs a store or edits")
        return found(project)

    def _edits(self, project: Project) -> Editable[T]:
        if self.edits is None:
            raise TypeError(f"{self.plural}: no standard PUT or DELETE without edits")
        return self.edits(project)

    def _id(self, request: Request) -> int:
        return request.path_id(resource=self.singular)

    def _one(self, project: Project, item: T, status: int = 200) -> Response:
        return Response(status, {self.singular: self.render(project, item)})

    def _list(self, state: State, request: Request) -> Response:
        selector = selector_from(request)
        name = request.first("name")
        wanted = self.filters(request)
        with state.transaction() as project:
            chosen = [
                item
                for item in self._state(project).by_id.values()
                if (name is None or item.name == name)
                and wanted(item)
                and selector.matches(item.labels)
            ]
            ordered = sort_items(chosen, request.every("sort"), self.sort_keys)
            return page_response(self.plural, ordered, request, lambda i: self.render(project, i))

    def _get(self, state: State, request: Request) -> Response:
        item_id = self._id(request)
        with state.transaction() as project:
            return self._one(project, self._state(project).get(item_id))

    def _update(self, state: State, request: Request) -> Response:
        item_id = self._id(request)
        with state.transaction() as project:
            if self.update is not None:
                item = self.update(project, item_id, request.body)
            else:
                changes = name_and_labels(request.body, self.read_name)
                item = self._edits(project).update(item_id, *changes)
            return self._one(project, item)

    def _delete(self, state: State, request: Request) -> Response:
        item_id = self._id(request)
        with state.transaction() as project:
            if self.delete is not None:
                action = self.delete(project, item_id)
            else:
                action = self._edits(project).delete(item_id)
            if action is None:
                return Response(204)
            return Response(200, {"action": action_json(action, project.now)})

    def _actions(self, state: State, request: Request) -> Response:
        item_id = self._id(request)
        with state.transaction() as project:
            self._state(project).get(item_id)
            return action_listing(request, project.actions.of(item_id, self.singular), project.now)

    def _action(self, state: State, request: Request) -> Response:
        """One action, if it concerns this resource."""
        item_id = self._id(request)
        action_id = request.path_id("action_id", resource="action")
        with state.transaction() as project:
            action = project.actions.get(action_id)
            if not action.touches(item_id, self.singular):
                raise not_found("action", action_id)
            return Response(200, {"action": action_json(action, project.now)})

    def _kind_actions(self, state: State, request: Request) -> Response:
        """The actions concerning any resource of the kind (`id` filters)."""
        ids = set(ids_from(request))
        with state.transaction() as project:
            found = [
                a
                for a in project.actions.by_id.values()
                if self._concerns(a) and (not ids or a.id in ids)
            ]
            return action_listing(request, found, project.now)

    def _kind_action(self, state: State, request: Request) -> Response:
        """One action, if it concerns a resource of the kind."""
        action_id = request.path_id(resource="action")
        with state.transaction() as project:
            action = project.actions.get(action_id)
            if not self._concerns(action):
                raise not_found("action", action_id)
            return Response(200, {"action": action_json(action, project.now)})

    def _concerns(self, action: Action) -> bool:
        return any(rtype == self.singular for _, rtype in action.resources)


def action_routes(
    plural: str, singular: str, handlers: Mapping[str, ActionHandler]
) -> list[Endpoint[State]]:
    """`POST /{plural}/{id}/actions/{name}` for each handler, in their order."""
    return [
        Endpoint("POST", f"/{plural}/{{id}}/actions/{name}", _dispatcher(singular, handler))
        for name, handler in handlers.items()
    ]


def _dispatcher(singular: str, handler: ActionHandler) -> Route:
    def dispatch(state: State, request: Request) -> Response:
        item_id = request.path_id(resource=singular)
        with state.transaction() as project:
            result = handler(project, item_id, request.body)
            if isinstance(result, Response):
                return result
            if isinstance(result, list):
                return Response(201, {"actions": [action_json(a, project.now) for a in result]})
            return Response(201, {"action": action_json(result, project.now)})

    return dispatch
