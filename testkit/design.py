"""The design document (``../shared/design/orca.machines.md``) read as data: its structs'
fields in their order, its methods and functions, its aliases and its example lines, so the
tests that hold the code to the document read the document itself, not a copy of it."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

DOCUMENT = Path(__file__).resolve().parent.parent.parent / "shared" / "design" / "orca.machines.md"
"""Where the checkout finds the document: ``../shared/design`` beside it, as CI has it."""


@dataclass
class Struct:
    """One ``### `Name``` section: its fields in order, with their types, and its methods."""

    name: str
    fields: list[tuple[str, str]] = field(default_factory=list)
    methods: dict[str, str] = field(default_factory=dict)
    """Each ``#### `method``` with its signature as the document writes it."""


@dataclass
class Design:
    """What the document names: see the module's docstring."""

    structs: dict[str, Struct]
    functions: dict[str, str]
    aliases: dict[str, str]
    example: list[str]
    """The opening example's lines, each as written, without its indentation."""
    text: str


_FIELD = re.compile(r"^- `(\w+): ([^`]+)`")
_ALIAS = re.compile(r'^comptime (\w+) = "([^"]*)"')
_SIGNATURE = re.compile(r"^def .*")


@cache
def design(path: Path = DOCUMENT) -> Design:
    """The document at ``path``, parsed (once per process)."""
    text = path.read_text(encoding="utf-8")
    structs: dict[str, Struct] = {}
    functions: dict[str, str] = {}
    aliases: dict[str, str] = {}
    section = ""
    struct: Struct | None = None
    method = ""
    for line in text.splitlines():
        if line.startswith("## "):
            section, struct, method = line[3:].strip(), None, ""
        elif line.startswith("### "):
            name = line[4:].strip().strip("`")
            method = ""
            if section == "Structs":
                struct = structs.setdefault(name, Struct(name))
            elif section == "Functions":
                functions[name] = ""
                method = name
        elif line.startswith("#### ") and struct is not None:
            method = line[5:].strip().strip("`")
            struct.methods[method] = ""
        elif (found := _FIELD.match(line)) and struct is not None and not method:
            struct.fields.append((found[1], found[2]))
        elif (found := _ALIAS.match(line)) and section == "Aliases":
            aliases[found[1]] = found[2]
        elif _SIGNATURE.match(line) and method:
            if struct is not None and section == "Structs":
                struct.methods[method] = line
            elif section == "Functions":
                functions[method] = line
    return Design(structs, functions, aliases, _example(text), text)


def _example(text: str) -> list[str]:
    """The lines from the first ``var p = Provider.of(`` to the blank line that ends them."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.lstrip().startswith("var p = "))
    block: list[str] = []
    for line in lines[start:]:
        if not line.strip():
            break
        block.append(line.strip())
    return block


def as_python(lines: list[str]) -> str:
    """The example's lines as Python: the document's ``var`` declarations are assignments."""
    return "\n".join(re.sub(r"^var ", "", line) for line in lines)


def field_names(struct: Struct) -> list[str]:
    return [name for name, _ in struct.fields]
