"""The clouds the program knows, by provider kind: adding a cloud adds a line here.

Each is a package with ``config.py`` (its deployment's settings, ``DEPLOYMENT``, whose class
variables are the cloud's facts for the program: its plugin, credentials, machine resource)
and ``components.py`` (``build``: its shared infrastructure and how it makes a pool's
machines). Shared code asks these, never a cloud's name.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from machines.program.config.models import BaseDeployment

CLOUDS: dict[str, str] = {
    "hetzner": "machines.program.clouds.hetzner",
    "ec2": "machines.program.clouds.ec2",
}


def deployments() -> dict[str, type[BaseDeployment]]:
    """Each provider kind's deployment model (its package's ``config.DEPLOYMENT``)."""
    return {
        kind: importlib.import_module(f"{module}.config").DEPLOYMENT
        for kind, module in CLOUDS.items()
    }


def credentials() -> dict[str, str]:
    """Every cloud's provider configuration keys that hold credentials, and their variables."""
    return {key: var for cls in deployments().values() for key, var in cls.credentials.items()}


def machine_resources() -> dict[str, type[BaseDeployment]]:
    """Each cloud's machine resource type token, and the deployment it is of."""
    return {cls.machine_resource: cls for cls in deployments().values() if cls.machine_resource}


def plugins() -> dict[str, str]:
    """Each cloud's resource plugin name, by provider kind."""
    return {kind: cls.plugin for kind, cls in deployments().items() if cls.plugin}
