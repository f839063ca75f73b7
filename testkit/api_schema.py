"""JSON schemas of the API objects issue 27 added to the emulator, as Hetzner's published API
description defines them (docs.hetzner.cloud, the `Network`, `PlacementGroup`, `Image`,
`Server.private_net` and `Pricing.primary_ips` schemas): every property the description
marks required, with its type, nullability and enum, and nothing else allowed, so an
answer that drops, renames or adds a field fails.

`conform(kind, body)` raises `jsonschema.ValidationError` naming the path that does not fit.
"""

from __future__ import annotations

from typing import Any

import jsonschema

Schema = dict[str, Any]


def _object(properties: dict[str, Schema]) -> Schema:
    """An object with exactly these properties, all required."""
    return {
        "type": "object",
        "properties": properties,
        "required": sorted(properties),
        "additionalProperties": False,
    }


def _nullable(schema: Schema) -> Schema:
    return {"anyOf": [schema, {"type": "null"}]}


INT: Schema = {"type": "integer"}
STR: Schema = {"type": "string"}
BOOL: Schema = {"type": "boolean"}
TIME: Schema = {"type": "string", "format": "date-time"}
LABELS: Schema = {"type": "object", "additionalProperties": STR}
IDS: Schema = {"type": "array", "items": INT}
MONEY: Schema = _object({"net": STR, "gross": STR})
PROTECTION: Schema = _object({"delete": BOOL})

SUBNET = _object(
    {
        "type": {"enum": ["cloud", "server", "vswitch"]},
        "ip_range": STR,
        "network_zone": {"enum": ["eu-central", "us-east", "us-west", "ap-southeast"]},
        "gateway": STR,
        "vswitch_id": _nullable(INT),
    }
)
NETWORK = _object(
    {
        "id": INT,
        "name": STR,
        "ip_range": STR,
        "subnets": {"type": "array", "items": SUBNET},
        "routes": {"type": "array", "items": _object({"destination": STR, "gateway": STR})},
        "servers": IDS,
        "load_balancers": IDS,
        "protection": PROTECTION,
        "labels": LABELS,
        "created": TIME,
        "expose_routes_to_vswitch": BOOL,
    }
)
PLACEMENT_GROUP = _object(
    {
        "id": INT,
        "name": STR,
        "labels": LABELS,
        "type": {"enum": ["spread"]},
        "created": TIME,
        "servers": IDS,
    }
)
DEPRECATION = _object({"announced": TIME, "unavailable_after": TIME})
IMAGE = _object(
    {
        "id": INT,
        "type": {"enum": ["system", "app", "snapshot", "backup"]},
        "status": {"enum": ["available", "creating", "unavailable"]},
        "name": _nullable(STR),
        "description": STR,
        "image_size": _nullable({"type": "number"}),
        "disk_size": {"type": "number"},
        "created": TIME,
        "created_from": _nullable(_object({"id": INT, "name": STR})),
        "bound_to": _nullable(INT),
        "os_flavor": {"enum": ["ubuntu", "centos", "debian", "fedora", "rocky", "alma", "unknown"]},
        "os_version": _nullable(STR),
        "rapid_deploy": BOOL,
        "protection": PROTECTION,
        "deprecated": _nullable(TIME),
        "deprecation": _nullable(DEPRECATION),
        "deleted": _nullable(TIME),
        "labels": LABELS,
        "architecture": {"enum": ["x86", "arm"]},
    }
)
PRIVATE_NET = _object(
    {"network": INT, "ip": STR, "alias_ips": {"type": "array", "items": STR}, "mac_address": STR}
)
PRIMARY_IP_PRICES = {
    "type": "array",
    "items": _object(
        {
            "type": {"enum": ["ipv4", "ipv6"]},
            "prices": {
                "type": "array",
                "items": _object({"location": STR, "price_hourly": MONEY, "price_monthly": MONEY}),
            },
        }
    ),
}

SCHEMAS: dict[str, Schema] = {
    "network": NETWORK,
    "placement_group": PLACEMENT_GROUP,
    "image": IMAGE,
    "private_net": PRIVATE_NET,
    "primary_ip_prices": PRIMARY_IP_PRICES,
}


def conform(kind: str, body: object) -> None:
    """Check `body` against the published schema of `kind` (a key of SCHEMAS)."""
    jsonschema.validate(
        body, SCHEMAS[kind], format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER
    )
