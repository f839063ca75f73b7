"""Adds the fake cloud's registry lines in every Python process started with this folder on
``PYTHONPATH`` (``testkit.fake_cloud.child_env``): the CLI, the engine's language host and
its dynamic provider, as an installed cloud's lines would be there."""

from testkit.fake_cloud import registry_lines

registry_lines()
