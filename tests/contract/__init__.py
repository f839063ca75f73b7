"""The runtime API's contract: every test runs against the Hetzner emulator and moto.

A behaviour proven here is the same on every cloud; what only one cloud has stays in
tests/hetzner and tests/ec2. The ``cloud`` fixture (testkit.fixtures) is each cloud in turn.
"""
