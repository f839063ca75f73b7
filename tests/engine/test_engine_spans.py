"""Automation's spans through the real engine: a preview, an up, a resize and a destroy of
the local stack against the emulator, each a span with the stack and its change summary."""

from __future__ import annotations

import pytest

from machines import automation

pytestmark = pytest.mark.engine


def quiet(_line: str) -> None:
    """The engine's progress, not shown."""


def only(recorded, name):
    (span,) = recorded.spans(name)
    return span.attributes


def test_a_first_preview_counts_what_it_would_create(deployment, recorded):
    diff = automation.preview("local", on_output=quiet)

    found = only(recorded, "automation.preview")
    assert found["orca.stack"] == "local"
    assert found["orca.changes.create"] == diff.counts["create"] > 0
    assert found["orca.changes.summary"] == diff.summary()


def test_up_then_resize_then_destroy_carry_their_summaries(deployment, recorded):
    automation.up("local", on_output=quiet)
    resized = automation.resize("local", "x86", 3, on_output=quiet)
    automation.destroy("local", on_output=quiet)

    assert only(recorded, "automation.up")["orca.changes.create"] > 0
    resize = only(recorded, "automation.resize")
    assert (resize["orca.pool"], resize["orca.size"]) == ("x86", 3)
    assert resize["orca.changes.create"] == resized.counts["create"] == 1
    assert only(recorded, "automation.destroy")["orca.changes.delete"] > 0
