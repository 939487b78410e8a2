"""The chart's PrometheusRule with Prometheus' own tool: ``promtool check rules`` on the rendered
groups, and ``promtool test rules`` (tests/deploy/alerts_test.yaml) with a case for every alert.
promtool comes from Debian's ``prometheus`` package, unpacked into .cache/prometheus/ by
``ensure_promtool`` (deploy/lib/bootstrap.sh) without installing or starting the server; the
tests run that function when it is missing and fail, never skip, without it."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.deploy.deploy_support import ROOT, run_tool
from tests.deploy.helm_support import FULL_VALUES, NAMESPACE, Helm, find, find_helm

pytestmark = pytest.mark.slow  # helm and promtool run as processes

PROMTOOL = ROOT / ".cache" / "prometheus" / "usr" / "bin" / "promtool"
ALERT_TESTS = Path(__file__).with_name("alerts_test.yaml")


@pytest.fixture(scope="module")
def promtool() -> str:
    if not PROMTOOL.exists():
        done = subprocess.run(
            ["bash", "-c", "source deploy/lib/bootstrap.sh && ensure_promtool"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        assert done.returncode == 0 and PROMTOOL.exists(), done.stdout + done.stderr
    return str(PROMTOOL)


@pytest.fixture(scope="module")
def groups() -> list[dict[str, Any]]:
    rule = find(Helm(find_helm()).template("-f", str(FULL_VALUES)), "PrometheusRule")
    found: list[dict[str, Any]] = rule["spec"]["groups"]
    return found


def write_rules(groups: list[dict[str, Any]], directory: Path) -> Path:
    rules = directory / "rules.yaml"
    rules.write_text(yaml.safe_dump({"groups": groups}, sort_keys=False))
    return rules


def test_promtool_checks_the_rules(
    promtool: str, groups: list[dict[str, Any]], tmp_path: Path
) -> None:
    done = run_tool(promtool, "check", "rules", str(write_rules(groups, tmp_path)))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "SUCCESS" in done.stdout


def test_promtool_runs_a_case_for_every_alert(
    promtool: str, groups: list[dict[str, Any]], tmp_path: Path
) -> None:
    write_rules(groups, tmp_path)
    tests = tmp_path / ALERT_TESTS.name
    shutil.copy(ALERT_TESTS, tests)
    done = run_tool(promtool, "test", "rules", str(tests))
    assert done.returncode == 0, done.stdout + done.stderr
    alerts = {r["alert"] for g in groups for r in g["rules"]}
    cases = yaml.safe_load(ALERT_TESTS.read_text())["tests"]
    firing = {t["alertname"] for case in cases for t in case["alert_rule_test"] if t["exp_alerts"]}
    assert firing == alerts, "every alert has a case in which it fires"


def test_every_expression_is_scoped_to_the_release(groups: list[dict[str, Any]]) -> None:
    for group in groups:
        for rule in group["rules"]:
            selectors = re.findall(r"gomoku_[a-z_]+\{([^}]*)\}", rule["expr"])
            names = re.findall(r"\bgomoku_[a-z_]+\b", rule["expr"])
            assert len(selectors) == len(names), rule["expr"]
            for selector in selectors:
                assert 'job="arc-gomoku-archive-api"' in selector, rule["expr"]
                assert f'namespace="{NAMESPACE}"' in selector, rule["expr"]


def test_promtool_really_fails_a_broken_rule(promtool: str, tmp_path: Path) -> None:
    broken = [{"name": "x", "rules": [{"alert": "X", "expr": "max(gomoku_x{) > 0"}]}]
    done = run_tool(promtool, "check", "rules", str(write_rules(broken, tmp_path)))
    assert done.returncode != 0
