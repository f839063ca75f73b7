"""The label-selector parser and matcher on their own, including what they refuse."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from emulator.errors import ApiError
from emulator.label_selector import Requirement, SelectorError, parse
from emulator.labels import is_valid_key, is_valid_value, validate_labels

LABELS = {"env": "prod", "team": "a", "example.com/role": "web", "flag": ""}


@pytest.mark.parametrize(
    ("text", "requirement"),
    [
        ("env=prod", Requirement("env", "eq", frozenset({"prod"}))),
        ("env==prod", Requirement("env", "eq", frozenset({"prod"}))),
        ("env != prod", Requirement("env", "ne", frozenset({"prod"}))),
        ("env", Requirement("env", "exists")),
        ("! env", Requirement("env", "absent")),
        ("env in (a, b)", Requirement("env", "in", frozenset({"a", "b"}))),
        ("env notin (a,b)", Requirement("env", "notin", frozenset({"a", "b"}))),
        ("example.com/role=web", Requirement("example.com/role", "eq", frozenset({"web"}))),
        ("flag=", Requirement("flag", "eq", frozenset({""}))),
    ],
)
def test_each_operator_parses_to_its_requirement(text: str, requirement: Requirement) -> None:
    assert parse(text).requirements == (requirement,)


def test_commas_inside_parentheses_belong_to_the_set() -> None:
    selector = parse("team in (a,b),env notin (dev, test),!gone")

    assert [r.operator for r in selector.requirements] == ["in", "notin", "absent"]
    assert selector.requirements[0].values == {"a", "b"}


@pytest.mark.parametrize(
    ("text", "selected"),
    [
        ("env=prod", True),
        ("env=dev", False),
        ("env!=dev", True),
        ("missing!=x", True),
        ("env", True),
        ("missing", False),
        ("!missing", True),
        ("!env", False),
        ("team in (a,b)", True),
        ("team in (b)", False),
        ("team notin (b)", True),
        ("missing notin (b)", True),
        ("missing in (b)", False),
        ("flag=", True),
        ("env=prod,team=a", True),
        ("env=prod,team=b", False),
        ("example.com/role==web", True),
        ("", True),
    ],
)
def test_selectors_match_like_the_real_api(text: str, selected: bool) -> None:
    assert parse(text).matches(LABELS) is selected


@pytest.mark.parametrize(
    "text",
    [
        "env=prod,",
        ",env",
        "env in ()",
        "env in (a",
        "env in a,b)",
        "env in (a,(b))",
        "=prod",
        "env=pr od",
        "env===prod",
        "-env=x",
        "env=-x",
        "env in (a b)",
        "k" * 64,
        "!",
    ],
)
def test_invalid_selectors_are_refused(text: str) -> None:
    with pytest.raises(SelectorError):
        parse(text)


@pytest.mark.parametrize(
    ("key", "valid"),
    [
        ("env", True),
        ("example.com/env", True),
        ("a-b_c.d", True),
        ("k" * 63, True),
        ("k" * 64, False),
        ("-env", False),
        ("env-", False),
        ("bad key", False),
        ("Example.com/env", False),
        ("hetzner.cloud/env", False),
        ("/env", False),
    ],
)
def test_label_keys_follow_hetzners_rules(key: str, valid: bool) -> None:
    assert is_valid_key(key) is valid


@pytest.mark.parametrize(
    ("value", "valid"),
    [
        ("", True),
        ("prod", True),
        ("v1.2_3-4", True),
        ("v" * 63, True),
        ("v" * 64, False),
        ("-v", False),
        ("v.", False),
        ("a b", False),
    ],
)
def test_label_values_follow_hetzners_rules(value: str, valid: bool) -> None:
    assert is_valid_value(value) is valid


def test_labels_must_be_an_object_of_strings() -> None:
    assert validate_labels(None) == {}
    with pytest.raises(ApiError, match="labels"):
        validate_labels({"k": 1})


names = st.from_regex(r"[a-z][a-z0-9]{0,5}", fullmatch=True)
label_sets = st.dictionaries(names, st.one_of(st.just(""), names), max_size=4)


@given(labels=label_sets, key=names, value=names)
def test_negations_are_complements(labels: dict[str, str], key: str, value: str) -> None:
    assert parse(f"!{key}").matches(labels) is not parse(key).matches(labels)
    assert parse(f"{key}!={value}").matches(labels) is not parse(f"{key}={value}").matches(labels)
    assert parse(f"{key} notin ({value})").matches(labels) is not parse(
        f"{key} in ({value})"
    ).matches(labels)
