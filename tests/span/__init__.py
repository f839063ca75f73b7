"""A pool that spans clouds (issue 39): its machines come from its next place with stock, on
the emulator or moto, through the runtime's ``Provider.of`` and an autoscaler's calls as they
are. ``testkit.span`` holds the two clouds and the pool; the fixture is ``span``.
"""
