"""Automation's stack operations carry spans with the stack and the change summary; these
run without the engine (a refused resize, a stack the engine cannot run) or on a Diff."""

import pytest

from machines import automation
from machines.automation import Change, Diff, PoolCount
from machines.automation.spans import summary
from machines.runtime.errors import SettingsError

SERVER = "hcloud:index/server:Server"


def change(op, name):
    return Change(op=op, type=SERVER, name=name, urn=f"urn:pulumi:prod::orca-machines::{name}")


def test_a_diff_becomes_the_change_summary():
    diff = Diff(
        stack="prod",
        changes=(change("create", "prod-ci-3"), change("delete", "prod-ci-1")),
        pools=(PoolCount(pool="ci", kept=2, autoscaled=1, deletes=1),),
    )

    assert summary(diff) == {
        "orca.changes.create": 1,
        "orca.changes.update": 0,
        "orca.changes.replace": 0,
        "orca.changes.delete": 1,
        "orca.changes.total": 2,
        "orca.changes.pools": 1,
        "orca.changes.summary": "1 to create, 0 to update, 0 to replace, 1 to delete",
    }


def test_a_refresh_counts_its_ops_but_not_the_unchanged():
    assert summary({"same": 4, "update": 1}) == {
        "orca.changes.same": 4,
        "orca.changes.update": 1,
        "orca.changes.total": 1,
    }


def test_a_refused_resize_has_a_failed_span_naming_the_pool(recorded):
    with pytest.raises(SettingsError):
        automation.resize("prod", "ci", -1)

    (span,) = recorded.spans("automation.resize")
    assert span.attributes["orca.stack"] == "prod"
    assert span.attributes["orca.pool"] == "ci"
    assert span.attributes["orca.size"] == -1
    assert span.attributes["error.type"] == "machines.runtime.errors.SettingsError"
    assert not span.status.is_ok
    assert span.events == ()
