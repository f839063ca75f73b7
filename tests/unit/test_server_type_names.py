"""Every Hetzner server type a committed stack, example or doc (the README, ``docs/``) names
is one the API serves today.

The emulator's catalogue is the reference (it follows the real API); a type the API removed
may be named only on a line that says so ("removed" or "deprecated").
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from emulator.process import PROJECT_ROOT
from emulator.resources.catalogue import data

SERVER_TYPE = re.compile(r"\b(?:cx|cpx|cax|ccx)\d{2}\b")
EXPLAINED = re.compile(r"removed|deprecated", re.IGNORECASE)
COMMITTED = (
    "stacks/*.yaml",
    "*.md",
    "docs/*.md",
    "*/README.md",
    "tools/*/README.md",
    "scripts/*",
    "bench/*.py",
    "machines/**/*.py",
    "__main__.py",
)


def _committed_files() -> list[Path]:
    found = {p for pattern in COMMITTED for p in PROJECT_ROOT.glob(pattern) if p.is_file()}
    return sorted(p for p in found if ".venv" not in p.parts and ".pulumi-engine" not in p.parts)


def test_the_files_checked_include_the_stacks_and_the_docs() -> None:
    names = {p.relative_to(PROJECT_ROOT).as_posix() for p in _committed_files()}

    assert {"stacks/Pulumi.local.yaml", "stacks/Pulumi.hetzner-example.yaml", "README.md"} <= names
    assert {"docs/runtime.md", "docs/operating.md", "docs/ci.md"} <= names
    assert "scripts/demo.py" in names


@pytest.mark.parametrize(
    "path", _committed_files(), ids=lambda p: p.relative_to(PROJECT_ROOT).as_posix()
)
def test_named_server_types_are_served(path: Path) -> None:
    served = {st.name for st in data.SERVER_TYPES}
    unknown = [
        f"{path.relative_to(PROJECT_ROOT)}:{number}: {name}"
        for number, line in enumerate(path.read_text(errors="replace").splitlines(), start=1)
        if not EXPLAINED.search(line)
        for name in SERVER_TYPE.findall(line)
        if name not in served
    ]

    assert unknown == [], f"server types the API no longer serves: {unknown}"
