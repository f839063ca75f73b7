"""The clouds the program knows, by provider kind: adding a cloud adds a line here.

Each is a package with ``config.py`` (its deployment's settings, ``DEPLOYMENT``) and
``components.py`` (``build``: its shared infrastructure and how it makes a pool's machines).
"""

from __future__ import annotations

CLOUDS: dict[str, str] = {
    "hetzner": "machines.program.hetzner",
    "ec2": "machines.program.ec2",
}
