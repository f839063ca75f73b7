"""Golden files: expected output kept beside the tests, reviewed by eye once.

``ORCA_UPDATE_GOLDEN=1 pytest tests/ci`` rewrites them (``tests/ci/golden/``) from the
current output; review the git diff before committing.
"""

from __future__ import annotations

import os
from pathlib import Path

GOLDEN = Path(__file__).resolve().parent.parent / "tests" / "ci" / "golden"


def assert_golden(name: str, text: str) -> None:
    """``text`` equals the golden file ``name`` (written instead when updating)."""
    path = GOLDEN / name
    if os.environ.get("ORCA_UPDATE_GOLDEN") == "1":
        path.write_text(text, encoding="utf-8")
    assert path.is_file(), f"no golden file {path}: run with ORCA_UPDATE_GOLDEN=1 and review it"
    assert text == path.read_text(encoding="utf-8"), f"differs from {path}"
