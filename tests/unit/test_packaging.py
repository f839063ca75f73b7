"""Installing orca-machines gives a user the `machines` package and nothing else.

The emulator, the tests and the benchmarks stay in the checkout (`python -m emulator` runs
from there): a top-level package named `emulator` must never land in a user's environment.
"""

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def wheel_packages(tmp_path: Path) -> set[str]:
    """The top-level names setuptools builds into the wheel (its build_py step), from a copy.

    The copy holds every top-level package of the checkout, so anything the pyproject's
    package finder lets through shows up; building in the checkout would leave egg-info.
    """
    source = tmp_path / "source"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    for package in ROOT.iterdir():
        if (package / "__init__.py").is_file() and not package.name.startswith("."):
            shutil.copytree(
                package, source / package.name, ignore=shutil.ignore_patterns("__pycache__")
            )
    out = tmp_path / "wheel"
    build_py = ["-c", "import setuptools; setuptools.setup()", "-q", "build_py", "-d", str(out)]
    subprocess.run(
        [sys.executable, *build_py],
        cwd=source,
        check=True,
        capture_output=True,
    )
    return {path.name for path in out.iterdir()}


def test_the_wheel_holds_machines_and_not_the_emulator(tmp_path):
    assert wheel_packages(tmp_path) == {"machines"}
