"""``docs/metrics.md`` lists every instrument of the runtime, with the name Prometheus shows
it by."""

import re

from machines.runtime.telemetry import INSTRUMENTS, OUTCOMES
from testkit import readme
from testkit.telemetry import prometheus_name


def section() -> str:
    return readme.section("The instruments", readme.doc("metrics"))


def test_the_metrics_doc_lists_every_instrument_and_no_other():
    rows = re.findall(r"^\| `([^`]+)` \| `([^`]+)` \|", section(), flags=re.MULTILINE)

    assert rows == [(i.name, prometheus_name(i)) for i in INSTRUMENTS]


def test_the_metrics_doc_names_every_outcome_of_a_try():
    assert all(f"`{outcome}`" in section() for outcome in OUTCOMES)


def test_every_attribute_is_listed_with_its_instrument():
    for instrument in INSTRUMENTS:
        (row,) = [r for r in section().splitlines() if r.startswith(f"| `{instrument.name}` ")]
        assert all(f"`{a}`" in row for a in instrument.attributes), instrument.name
