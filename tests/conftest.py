"""Every test's fixtures come from ``testkit.fixtures`` (what is where: ``testkit/__init__.py``)."""

pytest_plugins = ["testkit.fixtures"]
