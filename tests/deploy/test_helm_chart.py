"""The Helm chart, with a real helm and a real validator: ``helm lint --strict``, and the chart
rendered with default values, with every option on, and with an existing Secret, each checked
by ``kubernetes-validate --strict`` for Kubernetes 1.30 and 1.34 and against what the program
really accepts (its commands, its port, its settings)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
import yaml

from gomoku_archive.settings import Settings
from gomoku_archive.web.metrics import Metrics
from tests.deploy.deploy_support import CHART, parse_command, run_tool, setting_names, tool
from tests.deploy.helm_support import (
    FULL_VALUES,
    FULLNAME,
    NAMESPACE,
    Helm,
    Manifest,
    env_names,
    find,
    find_helm,
    pod_specs,
)

# helm (fetched on first use), kubernetes-validate or check-jsonschema run as processes in all but
# two of these tests.
pytestmark = pytest.mark.slow

KUBERNETES_VERSIONS = ("1.30", "1.34")
EXISTING_SECRET = ("--set", "secrets.existingSecret=archive-credentials")
DEFAULT_VALUES = ("-f", str(CHART / "ci" / "default-values.yaml"))
"""Only the required secrets: the chart has no default credentials."""
VARIANTS = {
    "default": DEFAULT_VALUES,
    "full": ("-f", str(FULL_VALUES)),
    "existing-secret": EXISTING_SECRET,
}
REMOVED_API_VERSIONS = {
    "extensions/v1beta1",
    "apps/v1beta1",
    "apps/v1beta2",
    "policy/v1beta1",
    "autoscaling/v2beta1",
    "autoscaling/v2beta2",
    "networking.k8s.io/v1beta1",
    "batch/v1beta1",
    "rbac.authorization.k8s.io/v1beta1",
}
CURRENT_API_VERSIONS = {
    "v1",
    "apps/v1",
    "batch/v1",
    "policy/v1",
    "autoscaling/v2",
    "networking.k8s.io/v1",
    "monitoring.coreos.com/v1",
}


@pytest.fixture(scope="module")
def helm() -> Helm:
    return Helm(find_helm())


@pytest.fixture(scope="module")
def rendered(helm: Helm) -> dict[str, list[Manifest]]:
    return {name: helm.template(*args) for name, args in VARIANTS.items()}


# --- helm itself --------------------------------------------------------------------------------


@pytest.mark.parametrize("variant", ["default", "full"])
def test_helm_lint_strict(helm: Helm, variant: str) -> None:
    done = helm.run("lint", "--strict", str(CHART), *VARIANTS[variant])
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 chart(s) failed" in done.stdout
    assert "[WARNING]" not in done.stdout and "[ERROR]" not in done.stdout


def test_the_schema_rejects_bad_values(helm: Helm) -> None:
    for bad in (
        "config.exportFirstMonth=2026-13",
        "secrets.opsToken=too-short",
        "secrets.databaseUrl=mysql://x",
        "api.autoscaling.enabled=maybe",
        "nosuchvalue=1",
    ):
        done = helm.run("template", "x", str(CHART), *DEFAULT_VALUES, "--set", bad)
        assert done.returncode != 0, bad
        assert "values don't meet the specifications of the schema" in done.stderr, bad


def test_a_worker_killed_before_its_grace_ends_is_refused(helm: Helm) -> None:
    done = helm.run(
        "template", "x", str(CHART), *DEFAULT_VALUES, "--set", "worker.graceSeconds=60",
        "--set", "worker.terminationGracePeriodSeconds=60",
    )  # fmt: skip
    assert done.returncode != 0
    assert "terminationGracePeriodSeconds must exceed worker.graceSeconds" in done.stderr


# --- the Kubernetes schemas ---------------------------------------------------------------------


@pytest.mark.parametrize("version", KUBERNETES_VERSIONS)
@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_kubernetes_validate_strict(helm: Helm, variant: str, version: str, tmp_path: Path) -> None:
    manifest = tmp_path / f"{variant}.yaml"
    manifest.write_text(helm.template_text(*VARIANTS[variant]))
    done = run_tool(
        tool("kubernetes-validate"), "--strict", "--kubernetes-version", version, str(manifest)
    )
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    assert "ERROR" not in output
    # Only the Prometheus Operator's kinds are unknown to it; they are checked below instead.
    for line in output.splitlines():
        if line.startswith("WARN"):
            assert re.search(r"kind (ServiceMonitor|PrometheusRule) with api version "
                             r"monitoring\.coreos\.com/v1", line), line  # fmt: skip
    passed = len(re.findall(r"passed for resource", output))
    unknown = len(re.findall(r"Couldn't find schema", output))
    assert passed + unknown == len(helm.template(*VARIANTS[variant]))


def test_the_validator_really_rejects_a_bad_manifest(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("apiVersion: v1\nkind: Service\nmetadata: {name: x}\nspec: {bogus: 1}\n")
    done = run_tool(tool("kubernetes-validate"), "--strict", "-k", "1.30", str(bad))
    assert done.returncode != 0


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_only_current_api_versions(rendered: dict[str, list[Manifest]], variant: str) -> None:
    versions = {m["apiVersion"] for m in rendered[variant]}
    assert not versions & REMOVED_API_VERSIONS
    assert versions <= CURRENT_API_VERSIONS


def test_what_each_variant_renders(rendered: dict[str, list[Manifest]]) -> None:
    def kinds(variant: str) -> list[str]:
        return sorted(m["kind"] for m in rendered[variant])

    assert kinds("default") == sorted(
        ["ConfigMap", "Secret", "Secret", "Deployment", "Deployment", "Service",
         "PodDisruptionBudget", "Job"]
    )  # fmt: skip
    assert set(kinds("full")) - set(kinds("default")) == {
        "HorizontalPodAutoscaler", "Ingress", "ServiceMonitor", "PrometheusRule", "NetworkPolicy"
    }  # fmt: skip
    assert "Secret" not in kinds("existing-secret")


# --- pods -----------------------------------------------------------------------------------


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_every_pod_is_locked_down(rendered: dict[str, list[Manifest]], variant: str) -> None:
    specs = dict(pod_specs(rendered[variant]))
    assert set(specs) == {f"{FULLNAME}-api", f"{FULLNAME}-worker", f"{FULLNAME}-migrate"}
    for name, spec in specs.items():
        assert spec["automountServiceAccountToken"] is False, name
        pod = spec["securityContext"]
        assert pod["runAsNonRoot"] is True and pod["runAsUser"] > 0, name
        assert pod["seccompProfile"] == {"type": "RuntimeDefault"}, name
        tmp_volumes = {v["name"] for v in spec["volumes"] if "emptyDir" in v}
        for container in spec["containers"]:
            context = container["securityContext"]
            assert context["readOnlyRootFilesystem"] is True, name
            assert context["allowPrivilegeEscalation"] is False, name
            assert context["capabilities"] == {"drop": ["ALL"]}, name
            mounts = {m["mountPath"]: m["name"] for m in container["volumeMounts"]}
            assert mounts.get("/tmp") in tmp_volumes, f"{name}: /tmp is an emptyDir"
            assert container["resources"]["requests"], name
            assert container["image"] in (
                "ghcr.io/gomoku-party/gomoku-archive:1.0.0",
                "ghcr.io/gomoku-party/gomoku-archive@sha256:" + "0123456789abcdef" * 4,
            )


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_containers_run_real_commands_with_real_settings(
    rendered: dict[str, list[Manifest]], variant: str
) -> None:
    manifests = rendered[variant]
    commands = {}
    for name, spec in pod_specs(manifests):
        (container,) = spec["containers"]
        commands[name.removeprefix(FULLNAME + "-")] = parse_command(container["args"])
        unknown = env_names(container, manifests) - setting_names()
        assert not unknown, f"{name} sets variables nothing reads: {sorted(unknown)}"
    assert {k: v.command for k, v in commands.items()} == {
        "api": "serve", "worker": "worker", "migrate": "migrate"
    }  # fmt: skip
    assert commands["api"].host == "0.0.0.0"


def env_of(container: Manifest) -> dict[str, str]:
    return {e["name"]: e["value"] for e in container.get("env", []) if "value" in e}


def test_api_probes_port_and_service(rendered: dict[str, list[Manifest]]) -> None:
    manifests = rendered["default"]
    api = find(manifests, "Deployment", f"{FULLNAME}-api")
    (container,) = api["spec"]["template"]["spec"]["containers"]
    assert parse_command(container["args"]).port is None, "the port is the PORT setting"
    env = Settings.from_env(env_of(container), isatty=False)
    assert container["ports"] == [
        {"name": "http", "containerPort": env.port, "protocol": "TCP"},
        {"name": "metrics", "containerPort": env.metrics_port, "protocol": "TCP"},
    ]
    assert container["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": "http"}
    assert container["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": "http"}
    assert api["spec"]["replicas"] == 2
    # The drain, then the grace downloads in flight get, then a margin for the clean-up.
    assert api["spec"]["template"]["spec"]["terminationGracePeriodSeconds"] == (
        env.shutdown_drain_seconds + env.shutdown_grace_seconds + 5
    )
    assert (env.shutdown_drain_seconds, env.shutdown_grace_seconds) == (15, 30)
    service = find(manifests, "Service")
    assert service["spec"]["ports"][0]["targetPort"] == "http"
    assert (
        service["spec"]["selector"].items() <= api["spec"]["template"]["metadata"]["labels"].items()
    )
    worker = find(manifests, "Deployment", f"{FULLNAME}-worker")
    assert (
        not service["spec"]["selector"].items()
        <= worker["spec"]["template"]["metadata"]["labels"].items()
    ), "the Service must not send requests to workers"
    pdb = find(manifests, "PodDisruptionBudget")
    assert pdb["spec"]["selector"]["matchLabels"] == service["spec"]["selector"]


def test_the_termination_grace_period_follows_the_drain_and_the_grace(helm: Helm) -> None:
    def api_pod(*values: str) -> Manifest:
        manifests = helm.template(*DEFAULT_VALUES, *values)
        spec: Manifest = find(manifests, "Deployment", f"{FULLNAME}-api")["spec"]["template"]
        return spec["spec"]

    derived = api_pod("--set", "api.drainSeconds=20", "--set", "api.graceSeconds=10")
    assert derived["terminationGracePeriodSeconds"] == 35
    (container,) = derived["containers"]
    assert env_of(container)["SHUTDOWN_DRAIN_SECONDS"] == "20"
    assert env_of(container)["SHUTDOWN_GRACE_SECONDS"] == "10"
    given = api_pod("--set", "api.terminationGracePeriodSeconds=90")
    assert given["terminationGracePeriodSeconds"] == 90, "more than needed is the operator's"
    done = helm.run(
        "template", "x", str(CHART), *DEFAULT_VALUES, "--set", "api.drainSeconds=20",
        "--set", "api.terminationGracePeriodSeconds=45",
    )  # fmt: skip
    assert done.returncode != 0
    assert (
        "api.terminationGracePeriodSeconds (45) must be at least api.drainSeconds + "
        "api.graceSeconds + 5 (55)" in done.stderr
    )


def test_the_pdb_never_blocks_a_drain_of_one_replica(helm: Helm) -> None:
    manifests = helm.template(*DEFAULT_VALUES, "--set", "api.replicas=1")
    pdb = find(manifests, "PodDisruptionBudget")["spec"]
    assert "minAvailable" not in pdb
    assert pdb["maxUnavailable"] >= 1, "one pod may always be evicted"


def test_credentials_have_no_defaults(helm: Helm) -> None:
    done = helm.run("template", "x", str(CHART))
    assert done.returncode != 0
    assert "secrets.databaseUrl (or secrets.existingSecret) is required" in done.stderr
    done = helm.run("template", "x", str(CHART), "--set", "secrets.databaseUrl=postgresql://d/x")
    assert "secrets.redisUrl (or secrets.existingSecret) is required" in done.stderr
    values = yaml.safe_load((CHART / "values.yaml").read_text(encoding="utf-8"))
    assert not any(values["secrets"].values()), "no credential has a default"


def test_the_migration_ends_before_helm_gives_up() -> None:
    values = yaml.safe_load((CHART / "values.yaml").read_text(encoding="utf-8"))
    assert values["migrations"]["activeDeadlineSeconds"] < 300, "Helm's default --timeout"


def test_public_origin_proxies_and_extra_env_reach_the_pods(helm: Helm) -> None:
    manifests = helm.template(
        *DEFAULT_VALUES,
        "--set", "config.publicBaseUrl=https://archive.example.com",
        "--set", "config.trustedProxies=10.0.0.0/8",
        "--set", "extraEnv[0].name=S3_PRESIGN_SECONDS", "--set-string", "extraEnv[0].value=900",
    )  # fmt: skip
    config = find(manifests, "ConfigMap")["data"]
    assert config["PUBLIC_BASE_URL"] == "https://archive.example.com"
    assert config["TRUSTED_PROXIES"] == "10.0.0.0/8"
    for name, spec in pod_specs(manifests):
        (container,) = spec["containers"]
        assert {"name": "S3_PRESIGN_SECONDS", "value": "900"} in container["env"], name
    settings = Settings.from_env(config, isatty=False)
    assert settings.public_base_url == "https://archive.example.com"


def test_an_image_digest_pins_the_image(helm: Helm) -> None:
    digest = "sha256:" + "ab" * 32
    manifests = helm.template(*DEFAULT_VALUES, "--set", f"image.digest={digest}")
    for name, spec in pod_specs(manifests):
        (container,) = spec["containers"]
        assert container["image"] == f"ghcr.io/gomoku-party/gomoku-archive@{digest}", name


def test_the_download_cache_is_requested_as_ephemeral_storage(
    rendered: dict[str, list[Manifest]],
) -> None:
    api = find(rendered["default"], "Deployment", f"{FULLNAME}-api")["spec"]["template"]["spec"]
    (container,) = api["containers"]
    (cache,) = [v for v in api["volumes"] if v["name"] == "download-cache"]
    assert container["resources"]["requests"]["ephemeral-storage"] == cache["emptyDir"]["sizeLimit"]


def test_pods_roll_when_an_existing_secret_changes(helm: Helm) -> None:
    # `lookup` reads the Secret from the cluster at install/upgrade time; `helm template` has no
    # cluster: there the operator's existingSecretChecksum (or Reloader) is what rolls the pods.
    def annotations(*values: str) -> list[dict[str, str]]:
        manifests = helm.template(*values)
        found = []
        for kind in ("api", "worker"):
            pod = find(manifests, "Deployment", f"{FULLNAME}-{kind}")["spec"]["template"]
            found.append(pod["metadata"]["annotations"])
        return found

    for pods in (annotations(*DEFAULT_VALUES), annotations(*EXISTING_SECRET)):
        for pod in pods:
            assert re.fullmatch(r"[0-9a-f]{64}", pod["checksum/secret"])
    helpers = (CHART / "templates" / "_helpers.tpl").read_text(encoding="utf-8")
    assert 'lookup "v1" "Secret" .Release.Namespace .Values.secrets.existingSecret' in helpers

    unset = {a["checksum/secret"] for a in annotations(*EXISTING_SECRET)}
    first = {
        a["checksum/secret"]
        for a in annotations(*EXISTING_SECRET, "--set", "secrets.existingSecretChecksum=v1")
    }
    second = {
        a["checksum/secret"]
        for a in annotations(*EXISTING_SECRET, "--set", "secrets.existingSecretChecksum=v2")
    }
    assert len(unset) == len(first) == len(second) == 1, "both Deployments roll together"
    assert len(unset | first | second) == 3, "a new value, a new annotation: the pods roll"


def test_a_reloader_annotation_names_the_secret(helm: Helm) -> None:
    for values, secret in ((DEFAULT_VALUES, FULLNAME), (EXISTING_SECRET, "archive-credentials")):
        manifests = helm.template(*values, "--set", "secrets.reloaderAnnotation=true")
        for kind in ("api", "worker"):
            deployment = find(manifests, "Deployment", f"{FULLNAME}-{kind}")
            assert deployment["metadata"]["annotations"] == {
                "secret.reloader.stakater.com/reload": secret
            }
        off = find(helm.template(*values), "Deployment", f"{FULLNAME}-api")
        assert "annotations" not in off["metadata"]


def test_api_probes_can_be_turned_off(helm: Helm) -> None:
    manifests = helm.template(
        *DEFAULT_VALUES,
        "--set", "api.readinessProbe.enabled=false", "--set", "api.livenessProbe.enabled=false",
    )  # fmt: skip
    (container,) = find(manifests, "Deployment", f"{FULLNAME}-api")["spec"]["template"]["spec"][
        "containers"
    ]
    assert "readinessProbe" not in container and "livenessProbe" not in container


def test_worker_liveness_and_termination(rendered: dict[str, list[Manifest]]) -> None:
    worker = find(rendered["default"], "Deployment", f"{FULLNAME}-worker")
    spec = worker["spec"]["template"]["spec"]
    (container,) = spec["containers"]
    options = parse_command(container["args"])
    assert spec["terminationGracePeriodSeconds"] > options.grace
    probe = container["livenessProbe"]["exec"]["command"]
    assert probe[0] == "gomoku-archive"
    check = parse_command(probe[1:])
    assert (check.command, check.check) == ("worker", True)
    assert check.max_age >= 3 * 10, "three of the watchdog's 10 s beats at least"
    assert container["livenessProbe"]["timeoutSeconds"] > 4, "the check's own Redis deadline"
    assert "ports" not in container
    assert {"name": "EXPORT_PROCESSES", "value": "2"} in container["env"]
    assert container["resources"]["requests"]["cpu"] == "2", "a core per export process"


def test_the_worker_requests_a_core_per_export_process(helm: Helm) -> None:
    def worker(*values: str) -> Manifest:
        manifests = helm.template(*DEFAULT_VALUES, *values)
        deployment = find(manifests, "Deployment", f"{FULLNAME}-worker")
        (container,) = deployment["spec"]["template"]["spec"]["containers"]
        found: Manifest = container
        return found

    four = worker("--set", "worker.exportProcesses=4")
    assert four["resources"]["requests"] == {"cpu": "4", "memory": "256Mi"}
    assert {"name": "EXPORT_PROCESSES", "value": "4"} in four["env"]
    given = worker(
        "--set", "worker.exportProcesses=4", "--set", "worker.resources.requests.cpu=1500m"
    )  # fmt: skip
    assert given["resources"]["requests"]["cpu"] == "1500m", "an explicit request wins"


def test_migration_is_a_hook_that_can_read_its_database_url(
    rendered: dict[str, list[Manifest]],
) -> None:
    for variant, secret_name in (
        ("default", f"{FULLNAME}-migrate"),
        ("existing-secret", "archive-credentials"),
    ):
        manifests = rendered[variant]
        job = find(manifests, "Job")
        annotations = job["metadata"]["annotations"]
        assert annotations["helm.sh/hook"] == "pre-install,pre-upgrade"
        (container,) = job["spec"]["template"]["spec"]["containers"]
        (ref,) = [e["valueFrom"]["secretKeyRef"] for e in container["env"] if "valueFrom" in e]
        assert ref == {"name": secret_name, "key": "DATABASE_URL"}
        if variant == "default":
            # Hooks run before the release's own resources exist: the Secret must be a hook too,
            # created first.
            secret = find(manifests, "Secret", secret_name)
            hook = secret["metadata"]["annotations"]
            assert hook["helm.sh/hook"] == annotations["helm.sh/hook"]
            assert int(hook["helm.sh/hook-weight"]) < int(annotations["helm.sh/hook-weight"])
        assert "ConfigMap" not in str(container), "the ConfigMap does not exist yet"


def test_credentials_come_from_the_chart_secret_or_an_existing_one(
    rendered: dict[str, list[Manifest]],
) -> None:
    own = find(rendered["full"], "Secret", FULLNAME)
    assert set(own["stringData"]) == {
        "DATABASE_URL", "REDIS_URL", "OPS_TOKEN", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"
    }  # fmt: skip
    config = find(rendered["full"], "ConfigMap")["data"]
    assert not set(config) & set(own["stringData"]), "no credential in the ConfigMap"
    for variant, name in (("default", FULLNAME), ("existing-secret", "archive-credentials")):
        for workload, spec in pod_specs(rendered[variant]):
            if workload.endswith("-migrate"):
                continue
            (container,) = spec["containers"]
            refs = [s["secretRef"]["name"] for s in container["envFrom"] if "secretRef" in s]
            assert refs == [name], workload


def test_the_s3_settings_reach_the_configmap(rendered: dict[str, list[Manifest]]) -> None:
    default = find(rendered["default"], "ConfigMap")["data"]
    assert not any(key.startswith(("S3_", "MIRROR_")) for key in default)
    full = find(rendered["full"], "ConfigMap")["data"]
    assert full["S3_BUCKET"] == "gomoku-archive"
    assert full["S3_REDIRECT"] == "on"
    assert full["CDN_BASE_URL"] == "https://cdn.example.com/archives"
    assert "S3_PUBLIC_ENDPOINT_URL" not in full, "behind a CDN nothing is presigned"
    settings = Settings.from_env(full, isatty=False)
    assert settings.mirror_check_seconds == 60
    assert settings.mirror_content_check_seconds == 900
    assert settings.mirror_content_sample_bytes == 1024 * 1024


def test_an_in_cluster_store_gets_a_public_endpoint_and_content_checks(helm: Helm) -> None:
    manifests = helm.template(
        *DEFAULT_VALUES,
        "--set", "config.s3.bucket=archives",
        "--set", "config.s3.endpointUrl=http://minio.storage.svc:9000",
        "--set", "config.s3.publicEndpointUrl=https://s3.example.com",
        "--set", "config.s3.contentCheckSeconds=7200",
        "--set-string", "config.s3.contentSampleBytes=0",
    )  # fmt: skip
    config = find(manifests, "ConfigMap")["data"]
    assert config["S3_PUBLIC_ENDPOINT_URL"] == "https://s3.example.com"
    settings = Settings.from_env(config, isatty=False)
    assert settings.s3_public_endpoint_url == "https://s3.example.com"
    assert settings.s3_endpoint_url == "http://minio.storage.svc:9000"
    assert (settings.mirror_content_check_seconds, settings.mirror_content_sample_bytes) == (
        7200,
        0,
    )
    for bad in ("config.s3.publicEndpointUrl=minio:9000", "config.s3.contentSampleBytes=lots"):
        done = helm.run("template", "x", str(CHART), *DEFAULT_VALUES, "--set", bad)
        assert "values don't meet the specifications of the schema" in done.stderr, bad


def test_network_policies_are_optional_and_fit_the_pods(
    helm: Helm, rendered: dict[str, list[Manifest]]
) -> None:
    assert not [m for m in rendered["default"] if m["kind"] == "NetworkPolicy"]
    manifests = rendered["full"]
    policies = {
        m["metadata"]["name"].removeprefix(FULLNAME + "-"): m["spec"]
        for m in manifests
        if m["kind"] == "NetworkPolicy"
    }
    assert set(policies) == {"api", "worker", "migrate"}
    for component, policy in policies.items():
        workload = next(
            spec for name, spec in pod_specs(manifests) if name == f"{FULLNAME}-{component}"
        )
        pod_labels = next(
            m["spec"]["template"]["metadata"]["labels"]
            for m in manifests
            if m["kind"] in ("Deployment", "Job") and m["metadata"]["name"].endswith(component)
        )
        assert policy["podSelector"]["matchLabels"].items() <= pod_labels.items(), component
        assert policy["policyTypes"] == ["Ingress", "Egress"]
        egress_ports = {p["port"] for rule in policy["egress"] for p in rule["ports"]}
        assert {53, 5432} <= egress_ports, component
        assert (6379 in egress_ports) == (component != "migrate")
        # The worker reaches S3; with workload identity (on in the full values) the API and
        # the worker reach STS; the migration neither.
        assert (443 in egress_ports) == (component != "migrate")
        if component != "api":
            assert policy["ingress"] == [], f"nothing may reach the {component}"
            continue
        (container,) = workload["containers"]
        named = {p["name"] for p in container["ports"]}
        http, metrics = policy["ingress"]
        assert http["ports"] == [{"port": "http", "protocol": "TCP"}]
        assert metrics["ports"] == [{"port": "metrics", "protocol": "TCP"}]
        assert {"http", "metrics"} <= named
        assert http["from"] == [
            {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "ingress-nginx"}}}
        ]
    database = next(r for r in policies["worker"]["egress"] if r["ports"][0]["port"] == 5432)
    assert database["to"] == [
        {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "db"}}}
    ], "the full values narrow PostgreSQL to its namespace"
    custom = helm.template(
        *DEFAULT_VALUES, "--set", "networkPolicy.enabled=true",
        "--set", "networkPolicy.s3.ports={443,9000}", "--set", "networkPolicy.redis.port=6380",
    )  # fmt: skip
    worker = find(custom, "NetworkPolicy", f"{FULLNAME}-worker")["spec"]
    ports = [[p["port"] for p in rule["ports"]] for rule in worker["egress"]]
    assert ports == [[53, 53], [5432], [6380], [443, 9000]]
    assert all("to" not in rule for rule in worker["egress"][1:]), "no peers: any address"


METADATA_ENDPOINTS = [
    "169.254.169.254/32",
    "169.254.170.23/32",
    "fd00:ec2::254/128",
    "fd00:ec2::23/128",
]


def test_workload_identity_lets_the_api_and_the_worker_reach_sts(helm: Helm) -> None:
    """With IRSA or EKS Pod Identity boto3 fetches S3 credentials from STS (or a metadata
    endpoint): a policy that lets the API reach only DNS, PostgreSQL and Redis left it
    without credentials (issue 34)."""

    def egress(*values: str) -> dict[str, list[Manifest]]:
        manifests = helm.template(*DEFAULT_VALUES, "--set", "networkPolicy.enabled=true", *values)
        return {
            name: find(manifests, "NetworkPolicy", f"{FULLNAME}-{name}")["spec"]["egress"]
            for name in ("api", "worker", "migrate")
        }

    def ports(rules: list[Manifest]) -> list[list[int]]:
        return [[p["port"] for p in rule["ports"]] for rule in rules]

    plain = egress()
    assert [443] not in ports(plain["api"]), "no STS unless asked"
    assert ports(plain["worker"]).count([443]) == 1, "the worker's S3 rule only"
    sts = egress("--set", "networkPolicy.workloadIdentity.enabled=true")
    assert ports(sts["api"]).count([443]) == 1, "STS"
    assert ports(sts["worker"]).count([443]) == 2, "S3's rule and STS's"
    for component in ("api", "worker"):
        rules = [r for r in sts[component] if ports([r]) == [[443]]]
        assert all("to" not in r for r in rules), "STS at any address (AWS's have none fixed)"
        assert [80] not in ports(sts[component]), "no metadata endpoint unless asked"
    assert ports(sts["migrate"]) == ports(plain["migrate"]), "the migration needs no S3"
    narrowed = egress(
        "--set", "networkPolicy.workloadIdentity.enabled=true",
        "--set", "networkPolicy.workloadIdentity.metadataEndpoints=true",
        "--set", "networkPolicy.workloadIdentity.sts.ports={443,8443}",
        "--set", "networkPolicy.workloadIdentity.sts.to[0].ipBlock.cidr=10.9.0.0/16",
    )  # fmt: skip
    for component in ("api", "worker"):
        (sts_rule,) = [r for r in narrowed[component] if ports([r]) == [[443, 8443]]]
        assert sts_rule["to"] == [{"ipBlock": {"cidr": "10.9.0.0/16"}}]
        (metadata,) = [r for r in narrowed[component] if ports([r]) == [[80]]]
        assert [peer["ipBlock"]["cidr"] for peer in metadata["to"]] == METADATA_ENDPOINTS
    assert [80] not in ports(narrowed["migrate"])


def test_operators_name_the_databases_and_redis_addresses_and_ports(helm: Helm) -> None:
    """A read replica (SOURCE_DATABASE_URL) or a cache on another port or address: each gets
    the port and the peers the operator names (CIDRs or selectors)."""
    manifests = helm.template(
        *DEFAULT_VALUES, "--set", "networkPolicy.enabled=true",
        "--set", "networkPolicy.postgresql.to[0].ipBlock.cidr=10.1.0.5/32",
        "--set", "networkPolicy.sourceDatabase.port=6432",
        "--set", "networkPolicy.sourceDatabase.to[0].ipBlock.cidr=10.2.0.0/24",
        "--set", "networkPolicy.redis.port=6380",
        "--set", "networkPolicy.redis.to[0].podSelector.matchLabels.app=cache",
    )  # fmt: skip
    policies = {
        name: find(manifests, "NetworkPolicy", f"{FULLNAME}-{name}")["spec"]["egress"]
        for name in ("api", "worker", "migrate")
    }
    by_port = {
        name: {rule["ports"][0]["port"]: rule.get("to") for rule in rules}
        for name, rules in policies.items()
    }
    for name in ("api", "worker", "migrate"):
        assert by_port[name][5432] == [{"ipBlock": {"cidr": "10.1.0.5/32"}}], name
    assert by_port["worker"][6432] == [{"ipBlock": {"cidr": "10.2.0.0/24"}}], "the replica"
    assert 6432 not in by_port["api"] and 6432 not in by_port["migrate"], "the export's alone"
    for name in ("api", "worker"):
        assert by_port[name][6380] == [{"podSelector": {"matchLabels": {"app": "cache"}}}]
    assert 6380 not in by_port["migrate"]
    unset = helm.template(*DEFAULT_VALUES, "--set", "networkPolicy.enabled=true")
    worker = find(unset, "NetworkPolicy", f"{FULLNAME}-worker")["spec"]["egress"]
    assert [r["ports"][0]["port"] for r in worker] == [53, 5432, 6379, 443], "no rule of its own"


# --- the optional parts ----------------------------------------------------------------------


def test_autoscaler_replaces_the_fixed_replica_count(rendered: dict[str, list[Manifest]]) -> None:
    manifests = rendered["full"]
    hpa = find(manifests, "HorizontalPodAutoscaler")
    assert hpa["spec"]["scaleTargetRef"] == {
        "apiVersion": "apps/v1", "kind": "Deployment", "name": f"{FULLNAME}-api"
    }  # fmt: skip
    assert "replicas" not in find(manifests, "Deployment", f"{FULLNAME}-api")["spec"]
    assert find(manifests, "Deployment", f"{FULLNAME}-worker")["spec"]["replicas"] == 3


def test_ingress_routes_to_the_service(rendered: dict[str, list[Manifest]]) -> None:
    manifests = rendered["full"]
    ingress = find(manifests, "Ingress")
    service = find(manifests, "Service")
    (rule,) = ingress["spec"]["rules"]
    backend = rule["http"]["paths"][0]["backend"]["service"]
    assert backend["name"] == service["metadata"]["name"]
    assert backend["port"]["name"] in {p["name"] for p in service["spec"]["ports"]}
    assert ingress["spec"]["tls"] == [
        {"secretName": "archive-tls", "hosts": ["archive.gomoku.example"]}
    ]


def test_service_monitor_scrapes_the_api(rendered: dict[str, list[Manifest]]) -> None:
    manifests = rendered["full"]
    monitor = find(manifests, "ServiceMonitor")
    service = find(manifests, "Service")
    assert (
        monitor["spec"]["selector"]["matchLabels"].items() <= service["metadata"]["labels"].items()
    )
    (endpoint,) = monitor["spec"]["endpoints"]
    assert endpoint["path"] == "/metrics"
    assert endpoint["port"] == "metrics"
    assert endpoint["port"] in {p["name"] for p in service["spec"]["ports"]}
    assert monitor["spec"]["namespaceSelector"] == {"matchNames": [NAMESPACE]}
    assert monitor["metadata"]["labels"]["release"] == "prometheus"


def test_the_ingress_does_not_route_metrics(rendered: dict[str, list[Manifest]]) -> None:
    manifests = rendered["full"]
    ingress = find(manifests, "Ingress")
    ports = {
        path["backend"]["service"]["port"]["name"]
        for rule in ingress["spec"]["rules"]
        for path in rule["http"]["paths"]
    }
    assert ports == {"http"}
    api = find(manifests, "Deployment", f"{FULLNAME}-api")["spec"]["template"]["spec"]
    (container,) = api["containers"]
    settings = Settings.from_env(env_of(container), isatty=False)
    http = next(p for p in container["ports"] if p["name"] == "http")["containerPort"]
    assert settings.metrics_port is not None and settings.metrics_port != http


def test_prometheus_rule_alerts_on_metrics_the_api_exports(
    rendered: dict[str, list[Manifest]],
) -> None:
    rule = find(rendered["full"], "PrometheusRule")
    alerts = {r["alert"]: r for group in rule["spec"]["groups"] for r in group["rules"]}
    assert set(alerts) == {
        "GomokuArchiveMonthUnpublished", "GomokuArchiveExportsFailing",
        "GomokuArchiveFreshnessUnknown", "GomokuArchiveMetricsAbsent",
        "GomokuArchiveNoLiveWorker", "GomokuArchiveMirrorFailing",
        "GomokuArchiveMirrorContentUnchecked",
    }  # fmt: skip
    exported = {name for metric in Metrics().registry.collect() for name in
                [metric.name, *(s.name for s in metric.samples)]}  # fmt: skip
    for alert in alerts.values():
        used = set(re.findall(r"\bgomoku_[a-z_]+", alert["expr"]))
        assert used and used <= exported, alert["expr"]
        assert f'namespace="{NAMESPACE}"' in alert["expr"]
        assert f'job="{FULLNAME}-api"' in alert["expr"]
        assert alert["labels"]["severity"] == "warning"
        assert alert["annotations"]["summary"]
    unpublished = alerts["GomokuArchiveMonthUnpublished"]["expr"]
    assert unpublished.startswith("max(gomoku_oldest_unpublished_month_age_seconds{")
    assert unpublished.endswith("> 43200"), "12 hours after the month closed"
    failing = alerts["GomokuArchiveExportsFailing"]
    assert failing["expr"].endswith("> 0") and failing["for"] == "1h"
    unchecked = alerts["GomokuArchiveMirrorContentUnchecked"]["expr"]
    assert "(2 * max by (file) (gomoku_mirror_content_cycle_seconds{" in unchecked, (
        "two of each file's own cycles"
    )


# --- values and notes ----------------------------------------------------------------------


PASSED_THROUGH = {
    "resources", "podSecurityContext", "securityContext", "hosts", "tls",
    "ingressFrom", "metricsFrom", "dnsTo", "to",
}  # fmt: skip
"""Blocks handed to Kubernetes as they are: a comment on the block describes them."""


def test_every_value_is_documented() -> None:
    lines = (CHART / "values.yaml").read_text(encoding="utf-8").splitlines()
    ancestors: list[tuple[int, str]] = []
    undocumented = []
    for number, line in enumerate(lines):
        match = re.match(r"^(\s*)([A-Za-z][\w.-]*):(.*)$", line)
        if not match:
            continue
        indent, key, rest = len(match.group(1)), match.group(2), match.group(3).strip()
        ancestors = [(i, k) for i, k in ancestors if i < indent]
        inside_passed_through = any(k in PASSED_THROUGH for _, k in ancestors)
        ancestors.append((indent, key))
        next_line = lines[number + 1].lstrip() if number + 1 < len(lines) else ""
        is_group = rest == "" and not next_line.startswith("-")
        if (is_group and key not in PASSED_THROUGH) or inside_passed_through:
            continue
        previous = lines[number - 1].strip() if number else ""
        if not previous.startswith("#"):
            undocumented.append(".".join(k for _, k in ancestors))
    assert undocumented == []


def test_values_schema_is_valid_json_schema() -> None:
    done = run_tool(
        tool("check-jsonschema"), "--check-metaschema", str(CHART / "values.schema.json")
    )
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize("variant", ["default", "full"])
def test_notes_say_how_to_reach_it(helm: Helm, variant: str, tmp_path: Path) -> None:
    # `helm template` does not print NOTES.txt and `helm install --dry-run` needs a cluster:
    # render it through a copy of the chart where it is an ordinary template.
    chart = tmp_path / "chart"
    shutil.copytree(CHART, chart)
    (chart / "templates" / "NOTES.txt").rename(chart / "notes-source.txt")
    (chart / "templates" / "notes.yaml").write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: notes}\n"
        'data:\n  notes: |\n{{ tpl (.Files.Get "notes-source.txt") . | indent 4 }}\n'
    )
    rendered = helm.template(*VARIANTS[variant], "--show-only", "templates/notes.yaml",
                             chart=chart)  # fmt: skip
    notes = rendered[0]["data"]["notes"]
    if variant == "default":
        assert f"port-forward service/{FULLNAME}-api 8080:80" in notes
        assert "/ops/ is disabled" in notes
    else:
        assert "https://archive.gomoku.example/database/" in notes
        assert "Operators: /ops/" in notes
    assert "{{" not in notes


def test_chart_metadata() -> None:
    chart = yaml.safe_load((CHART / "Chart.yaml").read_text(encoding="utf-8"))
    assert chart["apiVersion"] == "v2"
    assert chart["name"] == CHART.name
    project = (CHART.parents[1] / "pyproject.toml").read_text(encoding="utf-8")
    version = re.search(r'^version = "([^"]+)"', project, re.MULTILINE)
    assert version and chart["appVersion"] == version.group(1), "the image tag is the app version"


# --- checkov ------------------------------------------------------------------------------------

CHECKOV = CHART.parents[1] / ".cache" / "checkov" / "venv" / "bin" / "checkov"


def checkov_skips() -> dict[str, str]:
    """The checks the chart's README justifies skipping, with the reason."""
    readme = (CHART / "README.md").read_text(encoding="utf-8")
    table = readme.split("<!-- checkov-skips -->")[1].split("<!-- /checkov-skips -->")[0]
    return dict(re.findall(r"^\| `(CKV2?_K8S_\d+)` \| (.+) \|$", table, re.MULTILINE))


@pytest.fixture(scope="module")
def checkov() -> str:
    if not CHECKOV.exists():
        done = run_tool("bash", "-c", "source deploy/lib/bootstrap.sh && ensure_checkov",
                        timeout=900)  # fmt: skip
        assert done.returncode == 0 and CHECKOV.exists(), done.stdout + done.stderr
    return str(CHECKOV)


@pytest.mark.parametrize("variant", ["default", "full"])
def test_checkov_finds_nothing_unjustified(
    helm: Helm, checkov: str, variant: str, tmp_path: Path
) -> None:
    skips = checkov_skips()
    assert len(skips) >= 4 and all(len(reason) > 40 for reason in skips.values())
    manifest = tmp_path / f"{variant}.yaml"
    manifest.write_text(helm.template_text(*VARIANTS[variant]))
    done = run_tool(
        checkov, "-f", str(manifest), "--framework", "kubernetes", "--compact", "--quiet",
        "--skip-download", "--skip-check", ",".join(sorted(skips)), timeout=600,
    )  # fmt: skip
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    assert re.search(r"Passed checks: [1-9]\d*, Failed checks: 0,", output), output


def test_checkov_really_fails_a_privileged_pod(checkov: str, tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: x, namespace: games}\n"
        "spec:\n  containers:\n    - name: x\n      image: busybox\n"
        "      securityContext: {privileged: true}\n"
    )
    done = run_tool(checkov, "-f", str(bad), "--framework", "kubernetes", "--compact",
                    "--quiet", "--skip-download", timeout=600)  # fmt: skip
    assert done.returncode != 0
    assert "CKV_K8S_16" in done.stdout  # privileged containers
