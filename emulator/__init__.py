"""A Hetzner Cloud API emulator: a real HTTP server (stdlib only) for tests and benchmarks.

`python -m emulator --port 0 --token T` serves the API under /v1 and prints its base URL;
`running_emulator(token)` runs it as a subprocess and `Control` steers it (stock, rate
limit, faults, request counts, reset, bulk servers) through /_emulator/.
"""

from emulator.control.client import Control, ControlError, RequestCounts
from emulator.process import Emulator, EmulatorStartError, running_emulator

__all__ = [
    "Control",
    "ControlError",
    "Emulator",
    "EmulatorStartError",
    "RequestCounts",
    "running_emulator",
]
