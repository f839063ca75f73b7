"""List endpoints' shared behaviour: `label_selector`, `sort`, `page`/`per_page` and `meta`.

Pagination follows the real API: `per_page` defaults to 25 and is capped at 50, and
`meta.pagination` carries page, per_page, previous_page, next_page, last_page and
total_entries (previous/next are null at the ends).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from emulator import label_selector
from emulator.errors import invalid_field
from emulator.routing import Json, Request, Response

T = TypeVar("T")
DEFAULT_PER_PAGE = 25
MAX_PER_PAGE = 50


def selector_from(request: Request) -> label_selector.Selector:
    """The parsed `label_selector` parameter (everything when absent); invalid is invalid_input."""
    text = request.first("label_selector") or ""
    try:
        return label_selector.parse(text)
    except label_selector.SelectorError as exc:
        raise invalid_field("label_selector", str(exc)) from None


def sort_items(
    items: Sequence[T], specs: list[str], keys: Mapping[str, Callable[[T], Any]]
) -> list[T]:
    """Sort by `field`, `field:asc` or `field:desc` specs, the first spec mattering most."""
    ordered = list(items)
    parsed: list[tuple[str, bool]] = []
    for spec in specs:
        name, _, direction = spec.partition(":")
        if name not in keys or direction not in ("", "asc", "desc"):
            raise invalid_field("sort", f"invalid sort '{spec}'")
        parsed.append((name, direction == "desc"))
    for name, descending in reversed(parsed):
        ordered.sort(key=keys[name], reverse=descending)
    return ordered


def paginate(items: Sequence[T], request: Request) -> tuple[list[T], Json]:
    """The requested page of `items` and the `meta` object describing it."""
    page = request.int_param("page", 1)
    per_page = request.int_param("per_page", DEFAULT_PER_PAGE)
    if page < 1:
        raise invalid_field("page", "must be at least 1")
    if per_page < 1:
        raise invalid_field("per_page", "must be at least 1")
    per_page = min(per_page, MAX_PER_PAGE)
    total = len(items)
    last = max(1, math.ceil(total / per_page))
    start = (page - 1) * per_page
    meta = {
        "pagination": {
            "page": page,
            "per_page": per_page,
            "previous_page": page - 1 if page > 1 else None,
            "next_page": page + 1 if page < last else None,
            "last_page": last,
            "total_entries": total,
        }
    }
    return list(items[start : start + per_page]), meta


def page_response(
    key: str,
    items: Sequence[T],
    request: Request,
    render: Callable[[T], Json],
) -> Response:
    """200 with one page of rendered items under `key`, plus `meta`."""
    page, meta = paginate(items, request)
    return Response(200, {key: [render(item) for item in page], "meta": meta})
