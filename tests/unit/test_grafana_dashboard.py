"""deploy/grafana: the dashboard is well-formed Grafana dashboard JSON (a JSON schema of the part of Grafana's
dashboard model that provisioning reads, in tests/data, plus unique panel ids and panels on the grid), every query names only metrics that the gateway or the bundled engine
export, and the provisioning and Prometheus files point at each other."""
import json
import re

import yaml

from gateway.metrics import GatewayMetrics
from tests.conftest import ROOT

DEPLOY = ROOT / "deploy"
DASHBOARD = json.loads((DEPLOY / "grafana" / "semcache-dashboard.json").read_text())
SUFFIXES = {"counter": ("_total", "_created"), "histogram": ("_bucket", "_sum", "_count", "_created"),
            "gauge": ("",), "summary": ("", "_sum", "_count")}


def exported_names() -> set[str]:
    """Series names the gateway exports (from its registry) and the engine exports (its collector's families)."""
    names = set()
    for family in GatewayMetrics().registry.collect():
        names.update(family.name + suffix for suffix in SUFFIXES[family.type])
    source = (ROOT / "backend_engine" / "metrics.py").read_text()
    for kind, name in re.findall(r'(Counter|Gauge|Histogram)MetricFamily\(\s*"([a-z_]+)"', source):
        names.update(name + suffix for suffix in SUFFIXES[kind.lower()])
    return names


def queried_names(expr: str) -> set[str]:
    """Metric names in a PromQL expression: identifiers outside label matchers, grouping clauses and ranges."""
    stripped = re.sub(r"\{[^}]*\}|\[[^\]]*\]|\b(by|without)\s*\([^)]*\)|\"[^\"]*\"", " ", expr)
    functions = {"sum", "rate", "increase", "topk", "histogram_quantile", "avg", "max", "min", "by"}
    return {w for w in re.findall(r"[a-zA-Z_:][a-zA-Z0-9_:]*", stripped) if w not in functions}


def test_the_dashboard_validates_against_the_dashboard_schema():
    import jsonschema
    schema = json.loads((ROOT / "tests" / "data" / "grafana_dashboard.schema.json").read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.validate(DASHBOARD, schema)
    broken = json.loads(json.dumps(DASHBOARD))
    broken["panels"][0]["gridPos"]["w"] = 30                    # wider than Grafana's 24-column grid
    del broken["panels"][1]["targets"][0]["refId"]
    errors = list(jsonschema.Draft202012Validator(schema).iter_errors(broken))
    assert len(errors) == 2, [e.message for e in errors]


def test_the_dashboard_has_the_fields_grafana_requires():
    for key, kind in {"uid": str, "title": str, "schemaVersion": int, "panels": list, "time": dict,
                      "templating": dict, "annotations": dict}.items():
        assert isinstance(DASHBOARD[key], kind), key
    assert re.fullmatch(r"[a-zA-Z0-9_-]{1,40}", DASHBOARD["uid"])
    ids = [p["id"] for p in DASHBOARD["panels"]]
    assert len(ids) == len(set(ids)) >= 12
    for panel in DASHBOARD["panels"]:
        grid = panel["gridPos"]
        assert {"x", "y", "w", "h"} <= set(grid) and 0 <= grid["x"] and grid["x"] + grid["w"] <= 24, panel["title"]
        assert panel["type"] in {"timeseries", "stat", "table", "bargauge"} and panel["targets"], panel["title"]
        assert len({t["refId"] for t in panel["targets"]}) == len(panel["targets"])


def test_every_query_names_an_exported_metric():
    exported = exported_names()
    assert "semcache_decisions_total" in exported and "semcache_engine_kv_blocks_used" in exported
    queried = set()
    for panel in DASHBOARD["panels"]:
        for target in panel["targets"]:
            names = queried_names(target["expr"])
            assert names, target["expr"]
            assert names <= exported, (panel["title"], names - exported)
            queried |= names
    # the views: outcomes, saved tokens, pollution, reasons, latency and TTFT by outcome, replicas
    for name in ("semcache_decisions_total", "semcache_saved_prefill_tokens_total",
                 "semcache_pollution_signals_total", "semcache_precision_proxy",
                 "semcache_time_to_first_token_seconds_bucket", "semcache_backend_cached_prompt_tokens_total"):
        assert name in queried, name
    # the checker does catch a misspelt metric
    assert not queried_names("rate(semcache_decisons_total[5m])") <= exported


def test_provisioning_and_scrape_config_fit_together():
    datasource = yaml.safe_load((DEPLOY / "grafana" / "provisioning" / "datasources" / "prometheus.yml").read_text())
    uid = datasource["datasources"][0]["uid"]
    assert all(p["datasource"]["uid"] == uid for p in DASHBOARD["panels"])
    provider = yaml.safe_load((DEPLOY / "grafana" / "provisioning" / "dashboards" / "semcache.yml").read_text())
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    grafana, prometheus = compose["services"]["grafana"], compose["services"]["prometheus"]
    mounted = {v.split(":")[1] for v in grafana["volumes"]}
    assert provider["providers"][0]["options"]["path"] + "/semcache-dashboard.json" in mounted
    assert grafana["profiles"] == prometheus["profiles"] == ["monitoring"]
    scrape = yaml.safe_load((DEPLOY / "prometheus" / "prometheus.yml").read_text())
    targets = {t for job in scrape["scrape_configs"] for c in job["static_configs"] for t in c["targets"]}
    gateway_port = compose["services"]["gateway"]["command"][-1]
    assert f"gateway:{gateway_port}" in targets
    assert {f"{name}:8001" for name in compose["services"] if name.startswith("backend-")} <= targets
    assert datasource["datasources"][0]["url"] == "http://prometheus:9090"
