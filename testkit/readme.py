"""The README read as a procedure: a section's fenced code blocks, so a test runs them as
written there."""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"
_FENCE = re.compile(r"^```(?P<lang>\w*)\n(?P<body>.*?)^```$", re.MULTILINE | re.DOTALL)


def section(title: str, readme: Path = README) -> str:
    """The text of the ``## title`` section, up to the next ``## `` heading."""
    text = readme.read_text(encoding="utf-8")
    start = text.index(f"\n## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end != -1 else len(text)]


def blocks(text: str, lang: str) -> list[str]:
    """The bodies of the fenced blocks of ``lang`` in ``text``, in order."""
    return [m.group("body") for m in _FENCE.finditer(text) if m.group("lang") == lang]


def commands(block: str) -> list[str]:
    """A shell block's commands, one a line, comments and blank lines left out."""
    return [line for line in block.splitlines() if line.strip() and not line.startswith("#")]


def exported(block: str) -> list[str]:
    """The variables a block of ``export NAME=...`` lines names, in order."""
    return re.findall(r"^export (\w+)=", block, re.MULTILINE)
