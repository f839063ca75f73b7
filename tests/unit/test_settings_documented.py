"""Every variable the code reads is named in ``machines.runtime.settings`` or in a registered
cloud's ``settings`` module, and in the one settings table of ``docs/settings.md``, once each."""

from __future__ import annotations

import importlib
import re
from collections import Counter

from machines.program.clouds import deployments
from machines.runtime import settings
from machines.runtime.clouds import CLOUDS, clouds
from machines.runtime.clouds.ec2.settings import ec2_env
from machines.runtime.clouds.hetzner.settings import hetzner_env
from testkit import readme

MODULES = [
    settings,
    *(importlib.import_module(f"{facts.rpartition('.')[0]}.settings") for facts in CLOUDS.values()),
]
VARIABLES = sorted(
    value
    for module in MODULES
    for name, value in vars(module).items()
    if name.isupper() and value == name
)


def variables_section() -> str:
    return readme.section("The variables", readme.doc("settings"))


def test_every_settings_variable_is_in_the_settings_table_once() -> None:
    named = Counter(
        name
        for row in readme.table(variables_section())
        for name in re.findall(r"`(\w+)`", row.split(" | ")[0])
    )
    assert {v: named[v] for v in VARIABLES if named[v] != 1} == {}
    assert sorted(named) == VARIABLES


def test_the_settings_table_is_one_table() -> None:
    rows = [i for i, line in enumerate(variables_section().splitlines()) if line.startswith("|")]
    assert rows == list(range(rows[0], rows[0] + len(rows)))


def test_no_other_document_has_a_settings_table() -> None:
    others = [readme.README, *sorted(readme.DOCS.glob("*.md"))]
    tables = [p.name for p in others if "| variable | read by | meaning |" in p.read_text()]
    assert tables == ["settings.md"]


def test_each_cloud_s_stack_settings_are_what_its_settings_write_and_its_stack_keys() -> None:
    """``Cloud.settings`` (what a provider of a stack takes from the stack alone) is every
    variable the cloud's settings write back, and each is set by one key of its stack file
    (how a stack's check names it)."""
    written = {
        "hetzner": hetzner_env("http://api", "image", ("key",), "wall"),
        "ec2": ec2_env(
            "eu-central-1", {"z": "s"}, "sg", "p", "ami", endpoint_url="http://a", events_queue="q"
        ),
    }
    for kind, facts in clouds().items():
        assert set(written[kind]) == set(facts.settings), kind
        assert set(deployments()[kind].setting_keys) == set(facts.settings), kind
