"""The real ``helm`` binary for the chart tests, and the chart rendered into Python objects.

``deploy/test.sh`` fetches helm into ``.cache/helm/`` (``ensure_helm`` in deploy/lib/bootstrap.sh);
when pytest runs on its own, the session fixture runs that same function. ``HELM`` names another
binary. Nothing here skips: without helm the tests fail and say why."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import yaml

from tests.deploy.deploy_support import CHART, ROOT, run_tool

CACHED_HELM = ROOT / ".cache" / "helm" / "helm"
RELEASE = "arc"
NAMESPACE = "games"
FULLNAME = f"{RELEASE}-gomoku-archive"
FULL_VALUES = CHART / "ci" / "full-values.yaml"

Manifest = dict[str, Any]


def find_helm() -> str:
    given = os.environ.get("HELM")
    if given:
        assert shutil.which(given), f"HELM={given} is not an executable"
        return given
    if not CACHED_HELM.exists():
        fetched = subprocess.run(
            ["bash", "-c", "source deploy/lib/bootstrap.sh && ensure_helm"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        assert fetched.returncode == 0 and CACHED_HELM.exists(), (
            "helm could not be fetched (ensure_helm in deploy/lib/bootstrap.sh); the chart tests "
            f"need it and never skip:\n{fetched.stdout}{fetched.stderr}"
        )
    return str(CACHED_HELM)


class Helm:
    def __init__(self, binary: str) -> None:
        self.binary = binary

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        return run_tool(self.binary, *args)

    def template_text(self, *args: str, chart: Path = CHART) -> str:
        done = self.run("template", RELEASE, str(chart), "--namespace", NAMESPACE, *args)
        assert done.returncode == 0, done.stderr
        return done.stdout

    def template(self, *args: str, chart: Path = CHART) -> list[Manifest]:
        return [d for d in yaml.safe_load_all(self.template_text(*args, chart=chart)) if d]


def find(manifests: Sequence[Manifest], kind: str, name: str | None = None) -> Manifest:
    found = [
        m
        for m in manifests
        if m["kind"] == kind and (name is None or m["metadata"]["name"] == name)
    ]
    assert len(found) == 1, f"{len(found)} {kind} named {name}"
    return found[0]


def pod_specs(manifests: Sequence[Manifest]) -> Iterator[tuple[str, dict[str, Any]]]:
    """(workload name, pod spec) of every Deployment and Job."""
    for m in manifests:
        if m["kind"] in ("Deployment", "Job"):
            yield m["metadata"]["name"], m["spec"]["template"]["spec"]


def env_names(container: dict[str, Any], manifests: Sequence[Manifest]) -> set[str]:
    """Every variable a container gets: its env, and the keys of the ConfigMaps and Secrets of
    this release it imports with envFrom (an existing Secret's keys are the operator's)."""
    names = {e["name"] for e in container.get("env", [])}
    for source in container.get("envFrom", []):
        for kind, ref in (("ConfigMap", "configMapRef"), ("Secret", "secretRef")):
            if ref not in source:
                continue
            for resource in manifests:
                if resource["kind"] == kind and resource["metadata"]["name"] == source[ref]["name"]:
                    names |= set(resource.get("data") or {}) | set(resource.get("stringData") or {})
    return names
