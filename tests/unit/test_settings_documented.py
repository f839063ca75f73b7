"""Every variable the code reads is named in ``machines.runtime.settings`` and in the README's one
settings table, once each."""

from __future__ import annotations

import re
from collections import Counter

from machines.runtime import settings
from testkit.readme import README

VARIABLES = sorted(
    value for name, value in vars(settings).items() if name.isupper() and value == name
)


def settings_table() -> list[str]:
    """The rows of the table under ``### Settings``, up to the first line that is not one."""
    lines = README.read_text(encoding="utf-8").split("\n### Settings\n", 1)[1].splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("|"))
    rows = []
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        rows.append(line)
    return rows[2:]


def test_every_settings_variable_is_in_the_readme_table_once() -> None:
    named = Counter(
        name for row in settings_table() for name in re.findall(r"`(\w+)`", row.split(" | ")[0])
    )
    assert {v: named[v] for v in VARIABLES if named[v] != 1} == {}
    assert sorted(named) == VARIABLES


def test_the_settings_table_is_one_table() -> None:
    section = README.read_text(encoding="utf-8").split("\n### Settings\n", 1)[1].split("\n#")[0]
    rows = [i for i, line in enumerate(section.splitlines()) if line.startswith("|")]
    assert rows == list(range(rows[0], rows[0] + len(rows)))
