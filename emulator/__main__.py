"""`python -m emulator --token T [--port 0] ...`: run the Hetzner Cloud API emulator."""

from __future__ import annotations

import signal
import sys
from types import FrameType

from emulator.config import parse_args
from emulator.server import serve


def _stop(signum: int, frame: FrameType | None) -> None:
    """Turn SIGTERM into a normal exit so the socket is closed cleanly."""
    raise SystemExit(0)


def main(argv: list[str] | None = None) -> int:
    """Parse the command line and serve until stopped."""
    config = parse_args(argv)
    signal.signal(signal.SIGTERM, _stop)
    try:
        serve(config)
    except KeyboardInterrupt:
        pass
    except OSError as exc:
        print(f"emulator: cannot listen on {config.host}:{config.port}: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
