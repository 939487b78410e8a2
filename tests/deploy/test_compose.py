"""deploy/compose.yaml: valid against the Compose specification's schema, and naming only what
exists: ``gomoku-archive`` commands the real parser accepts, the port the API listens on, and
environment variables the program reads."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from gomoku_archive.settings import Settings
from tests.deploy.deploy_support import DEPLOY, parse_command, run_tool, setting_names, tool

COMPOSE = DEPLOY / "compose.yaml"
ARCHIVE_SERVICES = ("migrate", "api", "worker")


def compose() -> dict[str, Any]:
    document: dict[str, Any] = yaml.safe_load(COMPOSE.read_text(encoding="utf-8"))
    return document


def service(name: str) -> dict[str, Any]:
    found: dict[str, Any] = compose()["services"][name]
    return found


@pytest.mark.slow  # runs check-jsonschema
def test_valid_against_the_compose_specification() -> None:
    done = run_tool(
        tool("check-jsonschema"), "--builtin-schema", "vendor.compose-spec", str(COMPOSE)
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_every_part_of_the_service_is_there() -> None:
    assert set(compose()["services"]) >= {"postgres", "redis", "s3", *ARCHIVE_SERVICES}


@pytest.mark.parametrize("name", ARCHIVE_SERVICES)
def test_archive_services_run_the_project_image_with_real_commands(name: str) -> None:
    spec = service(name)
    assert spec["build"]["dockerfile"] == "deploy/Dockerfile"
    assert spec["image"] == service("api")["image"], "one image for all three"
    parse_command(spec["command"])


def test_the_commands_are_the_right_ones() -> None:
    assert parse_command(service("migrate")["command"]).command == "migrate"
    assert parse_command(service("worker")["command"]).command == "worker"
    api = parse_command(service("api")["command"])
    assert (api.command, api.host) == ("serve", "0.0.0.0")


def test_the_api_publishes_the_port_it_listens_on() -> None:
    given = parse_command(service("api")["command"]).port
    port = given if given is not None else int(service("api")["environment"].get("PORT", 8080))
    published = [str(p) for p in service("api")["ports"]]
    assert published == [f"127.0.0.1:{port}:{port}"]
    assert f"127.0.0.1:{port}/" in " ".join(service("api")["healthcheck"]["test"])


def test_the_worker_is_checked_by_its_liveness_command() -> None:
    test = service("worker")["healthcheck"]["test"]
    assert test[:2] == ["CMD", "gomoku-archive"]
    assert parse_command(test[2:]).check is True


def test_the_worker_is_killed_only_after_its_grace_period() -> None:
    grace = parse_command(service("worker")["command"]).grace
    stop = service("worker")["stop_grace_period"]
    assert stop.endswith("s") and int(stop[:-1]) > grace


@pytest.mark.parametrize("name", ARCHIVE_SERVICES)
def test_only_variables_the_program_reads(name: str) -> None:
    unknown = set(service(name)["environment"]) - setting_names()
    assert not unknown, f"{name} sets variables nothing reads: {sorted(unknown)}"
    assert {"DATABASE_URL", "REDIS_URL"} <= set(service(name)["environment"])


@pytest.mark.parametrize(
    ("name", "needs"),
    [
        ("migrate", {"postgres": "service_healthy"}),
        (
            "api",
            {
                "postgres": "service_healthy",
                "redis": "service_healthy",
                "migrate": "service_completed_successfully",
            },
        ),
        (
            "worker",
            {
                "postgres": "service_healthy",
                "redis": "service_healthy",
                "migrate": "service_completed_successfully",
            },
        ),
    ],
)
def test_start_order(name: str, needs: dict[str, str]) -> None:
    conditions = {dep: spec["condition"] for dep, spec in service(name)["depends_on"].items()}
    assert needs.items() <= conditions.items()


@pytest.mark.parametrize("name", ["postgres", "redis", "s3", "api", "worker"])
def test_long_running_services_have_healthchecks(name: str) -> None:
    assert service(name)["healthcheck"]["test"]


def test_every_dependency_on_a_service_waits_for_its_health_or_completion() -> None:
    for name, spec in compose()["services"].items():
        for dep, needs in (spec.get("depends_on") or {}).items():
            if compose()["services"][dep].get("restart") == "no":
                assert needs["condition"] == "service_completed_successfully", (name, dep)
            else:
                assert needs["condition"] == "service_healthy", (name, dep)


def test_every_image_is_pinned_to_a_version() -> None:
    for name, spec in compose()["services"].items():
        image = spec["image"]
        assert ":" in image and not image.endswith(":latest"), f"{name}: {image}"


def test_redirects_point_at_the_store_as_published_on_this_machine() -> None:
    """A browser on the host follows a presigned URL of S3_PUBLIC_ENDPOINT_URL, which must be
    the store's port as published there (http://s3:9000 resolves only inside Compose)."""
    env = service("api")["environment"]
    public = env["S3_PUBLIC_ENDPOINT_URL"].replace("${S3_PORT:-9000}", "9000")
    assert public == "http://127.0.0.1:9000"
    published = [str(p).replace("${S3_PORT:-9000}", "9000") for p in service("s3")["ports"]]
    assert "127.0.0.1:9000:9000" in published
    assert "--address :9000" in " ".join(service("s3")["command"])
    assert env["S3_ENDPOINT_URL"] == "http://s3:9000", "the service itself uses the inner name"


def test_the_api_is_stopped_only_after_its_drain_and_downloads() -> None:
    stop = service("api")["stop_grace_period"]
    settings = Settings.from_env({}, isatty=False)  # the Compose file leaves both as they are
    bound = settings.shutdown_drain_seconds + settings.shutdown_grace_seconds
    assert stop.endswith("s") and int(stop[:-1]) >= bound + 5, "the chart's margin too"
