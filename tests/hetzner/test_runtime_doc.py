"""docs/runtime.md's first snippet, run as written there, against the emulator: every name it
uses is defined, and what its comments say the calls answer is what they answer."""

from __future__ import annotations

from typing import Any

from machines import Created, Provider
from testkit import readme

SNIPPET = readme.blocks(readme.doc("runtime").read_text(encoding="utf-8"), "python")[0]


def test_the_runtime_snippet_runs_as_written(hetzner_env: dict[str, str]) -> None:
    names: dict[str, Any] = {}

    exec(compile(SNIPPET, "docs/runtime.md", "exec"), names)  # the doc's own text

    created: Created = names["created"]
    provider: Provider = names["provider"]
    assert created.ok, created.reason
    assert provider.arch("cax11") == "arm64"
    assert provider.offers("cax11") == ["fsn1", "nbg1", "hel1"]
    assert [m.name for m in names["idle"]] == ["ci-1"]
