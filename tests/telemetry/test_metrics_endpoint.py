"""``orca-machines metrics`` and ``machines.prometheus.serve``: the runtime's instruments
scraped over HTTP, as Prometheus does, during a short workload against the emulator."""

import pytest

from machines.runtime.telemetry import INSTRUMENTS
from testkit.commands import machines_cli
from testkit.metrics_endpoint import samples, serving
from testkit.telemetry import prometheus_name


def names(text):
    return {name for name, _ in samples(text)}


@pytest.fixture
def limited(emulator, hetzner_env):
    """The emulator stating a budget of 3,600 requests an hour, as Hetzner does."""
    emulator.control.set_rate_limit(limit=3600)
    return emulator


def test_the_metrics_command_serves_the_listing_and_the_budget(limited, hcloud):
    command = ["-m", "machines", "metrics", "--provider", "hetzner", "--owner", "prod"]
    with serving([*command, "--pools", "ci,lab", "--port", "0", "--every", "0.2"]) as endpoint:
        first = endpoint.line()
        endpoint.line()
        text = endpoint.scrape()

    assert first.startswith("round 1: ci 0, lab 0; budget ")
    found = names(text)
    assert {
        "orca_machines_budget_limit",
        "orca_machines_budget_remaining",
        "orca_machines_listing_window_seconds",
        "orca_machines_listing_age_seconds",
        "orca_machines_requests_total",
        "http_client_request_duration_seconds_bucket",
        "orca_machines_call_duration_seconds_count",
    } <= found
    assert 'orca_machines_budget_limit{orca_owner="prod",orca_provider="hetzner"' in text
    assert 'orca_operation="GET /servers",orca_outcome="ok"' in text
    assert 'service_name="orca-machines"' in text


def test_a_workload_shows_every_instrument(workload_scrape):
    found = names(workload_scrape)
    for instrument in INSTRUMENTS:
        series = prometheus_name(instrument)
        if instrument.kind == "histogram":
            series += "_bucket"
        assert series in found, instrument.name
    assert 'orca_outcome="no_stock"' in workload_scrape
    retried = 'orca_machines_retries_total{orca_operation="POST /servers",orca_outcome="5xx"'
    assert retried in workload_scrape


def test_the_command_refuses_a_bad_pool_in_one_line(hetzner_env):
    done = machines_cli("metrics", "--provider", "hetzner", "--pools", "ci,", "--port", "0")

    assert done.returncode == 1
    assert done.stderr.count("\n") == 1
    assert "pool is empty" in done.stderr
