"""The clouds the program knows, by provider kind: adding a cloud adds a line here.

Each is a package with ``config.py`` (its deployment's settings, ``DEPLOYMENT``) and
``components.py`` (``build``: its shared infrastructure and how it makes a pool's machines).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from machines.program.config.models import BaseDeployment

CLOUDS: dict[str, str] = {
    "hetzner": "machines.program.hetzner",
    "ec2": "machines.program.ec2",
}


def deployments() -> dict[str, type[BaseDeployment]]:
    """Each provider kind's deployment model (its package's ``config.DEPLOYMENT``)."""
    return {
        kind: importlib.import_module(f"{module}.config").DEPLOYMENT
        for kind, module in CLOUDS.items()
    }
