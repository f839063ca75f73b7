"""Hetzner's label-selector language: parse `label_selector=` and match it against labels.

Syntax (docs.hetzner.cloud, "Label Selector"): `k=v` and `k==v` (equals), `k!=v` (differs),
`k` (present), `!k` (absent), `k in (v1,v2)`, `k notin (v1,v2)`, and a comma for AND; commas
inside parentheses belong to the set. As in Kubernetes, whose language this is, `k!=v` and
`k notin (...)` also match resources that lack `k`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from emulator.labels import is_valid_key, is_valid_value

Operator = Literal["eq", "ne", "in", "notin", "exists", "absent"]

_KEY = r"[^\s=!(),]+"
_VALUE = r"[^\s=!(),]*"
_ABSENT = re.compile(rf"!\s*({_KEY})")
_SET = re.compile(rf"({_KEY})\s+(in|notin)\s*\(([^()]*)\)")
_COMPARE = re.compile(rf"({_KEY})\s*(==|!=|=)\s*({_VALUE})")
_EXISTS = re.compile(_KEY)
_OPERATORS: dict[str, Operator] = {"=": "eq", "==": "eq", "!=": "ne", "in": "in", "notin": "notin"}


class SelectorError(ValueError):
    """The selector text is not valid Hetzner label-selector syntax."""


@dataclass(frozen=True)
class Requirement:
    """One comma-separated term of a selector."""

    key: str
    operator: Operator
    values: frozenset[str] = frozenset()

    def matches(self, labels: Mapping[str, str]) -> bool:
        """Whether a resource with these labels satisfies this term."""
        present = self.key in labels
        value = labels.get(self.key)
        if self.operator == "exists":
            return present
        if self.operator == "absent":
            return not present
        if self.operator in ("eq", "in"):
            return present and value in self.values
        return not present or value not in self.values  # ne, notin


@dataclass(frozen=True)
class Selector:
    """A parsed selector: every requirement must hold (AND)."""

    requirements: tuple[Requirement, ...]

    def matches(self, labels: Mapping[str, str]) -> bool:
        """Whether a resource with these labels is selected."""
        return all(requirement.matches(labels) for requirement in self.requirements)


def parse(text: str) -> Selector:
    """Parse selector text; an empty or blank text selects everything."""
    if not text.strip():
        return Selector(())
    return Selector(tuple(_parse_term(term) for term in _split_terms(text)))


def _split_terms(text: str) -> list[str]:
    """Split on the commas outside parentheses."""
    terms: list[str] = []
    depth = 0
    current: list[str] = []
    for char in text:
        if char == "(":
            depth += 1
            if depth > 1:
                raise SelectorError("nested parentheses are not allowed")
        elif char == ")":
            depth -= 1
            if depth < 0:
                raise SelectorError("unbalanced ')'")
        if char == "," and depth == 0:
            terms.append("".join(current))
            current = []
        else:
            current.append(char)
    if depth != 0:
        raise SelectorError("unbalanced '('")
    terms.append("".join(current))
    return terms


def _parse_term(raw: str) -> Requirement:
    term = raw.strip()
    if not term:
        raise SelectorError("empty term")
    if match := _ABSENT.fullmatch(term):
        return Requirement(_key(match.group(1)), "absent")
    if match := _SET.fullmatch(term):
        values = [value.strip() for value in match.group(3).split(",")]
        if values == [""]:
            raise SelectorError(f"empty value set in '{term}'")
        return Requirement(
            _key(match.group(1)),
            _OPERATORS[match.group(2)],
            frozenset(_value(value) for value in values),
        )
    if match := _COMPARE.fullmatch(term):
        return Requirement(
            _key(match.group(1)),
            _OPERATORS[match.group(2)],
            frozenset({_value(match.group(3))}),
        )
    if _EXISTS.fullmatch(term):
        return Requirement(_key(term), "exists")
    raise SelectorError(f"cannot parse '{term}'")


def _key(key: str) -> str:
    if not is_valid_key(key, allow_reserved=True):
        raise SelectorError(f"invalid label key '{key}'")
    return key


def _value(value: str) -> str:
    if not is_valid_value(value):
        raise SelectorError(f"invalid label value '{value}'")
    return value
