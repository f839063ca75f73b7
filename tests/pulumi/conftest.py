"""Fixtures for the Pulumi program's tests: every stack file under stacks/ on one cloud, run
under mocks (the one spanning both clouds has its own tests, ``test_pulumi_span.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from machines.program.config.loader import load
from machines.program.config.stack_config import StackConfig
from testkit.program_harness import STACKS, StackRun, run_program, stack_file, stack_name


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "filterwarnings", r"ignore:aws\.ec2/encryptioncontrol:DeprecationWarning"
    )


@pytest.fixture(params=STACKS, ids=stack_name, scope="module")
def stack(request: pytest.FixtureRequest) -> StackRun:
    """Every stack file under ``stacks/`` on one cloud, run once per test module."""
    path: Path = request.param
    raw = stack_file(path)
    config = StackConfig.from_stack_file(raw)
    name = stack_name(path)
    return StackRun(path, name, raw, load(config, name), run_program(name, config))
