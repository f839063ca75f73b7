"""The Grafana dashboard queries only series and labels the runtime really serves: each
panel's PromQL is checked against a scrape of a workload against the emulator."""

import json
import re
from pathlib import Path

from testkit.metrics_endpoint import samples

DASHBOARD = Path(__file__).resolve().parents[2] / "dashboards" / "orca-machines.json"
SERIES = re.compile(r"\b((?:orca_machines|http_client)_[a-z_]+)\b")
BY = re.compile(r"\bby \(([^)]*)\)")
MATCHER = re.compile(r"(\w+)\s*(?:=~|!~|!=|=)\s*\"")
LABEL_VALUES = re.compile(r"label_values\((\w+), (\w+)\)")


def dashboard():
    return json.loads(DASHBOARD.read_text(encoding="utf-8"))


def panels():
    return [p for p in dashboard()["panels"] if p["type"] != "row"]


def labels_of(scrape):
    """Each series name of the scrape, and the label names its samples carry."""
    found: dict[str, set[str]] = {}
    for name, labels in samples(scrape):
        found.setdefault(name, set()).update(re.findall(r'(\w+)="', labels))
    return found


def test_the_dashboard_has_panels_on_the_prometheus_data_source():
    assert len(panels()) >= 10
    for panel in panels():
        assert panel["targets"], panel["title"]
        assert panel["datasource"] == {"type": "prometheus", "uid": "${datasource}"}


def test_every_panel_queries_series_and_labels_the_runtime_serves(workload_scrape):
    served = labels_of(workload_scrape)
    for target in [t for panel in panels() for t in panel["targets"]]:
        expr = target["expr"]
        series = SERIES.findall(expr)
        assert series, expr
        assert set(series) <= set(served), expr
        labels = set().union(*(served[s] for s in series)) | {"le"}
        used = {m for m in MATCHER.findall(expr)}
        used |= {b.strip() for group in BY.findall(expr) for b in group.split(",")}
        assert used <= labels, (expr, used - labels)
        legend = set(re.findall(r"\{\{(\w+)\}\}", target.get("legendFormat", "")))
        assert legend <= labels, (expr, legend - labels)


def test_the_dashboards_variables_read_labels_the_runtime_serves(workload_scrape):
    served = labels_of(workload_scrape)
    queries = [v for v in dashboard()["templating"]["list"] if v["type"] == "query"]
    for variable in queries:
        ((series, label),) = LABEL_VALUES.findall(variable["definition"])
        assert label in served[series], variable["name"]
