"""The control API under /_emulator/: `client.py` steers a running emulator from tests and
benchmarks; `handlers.py` is the emulator's side of it (its routes).

Importing this package loads only the client.
"""

from emulator.control.client import Control, ControlError, RequestCounts

__all__ = ["Control", "ControlError", "RequestCounts"]
