"""deploy/Dockerfile: hadolint finds nothing (any ignore says why), and the image is built the
way docs/operators/deployment.md says: two stages, pinned dependencies, a non-root user, one
image whose command picks the process."""

from __future__ import annotations

import json
import re

import pytest

from gomoku_archive.settings import Settings
from tests.deploy.deploy_support import DEPLOY, ROOT, parse_command, run_tool, tool
from tests.docs_pages import DOCS, page

DOCKERFILE = DEPLOY / "Dockerfile"


def instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) with continuation lines joined and comments dropped."""
    joined = re.sub(r"\\\n(\s*#[^\n]*\n)*", " ", DOCKERFILE.read_text(encoding="utf-8"))
    found = []
    for line in joined.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            keyword, _, rest = line.partition(" ")
            found.append((keyword.upper(), rest.strip()))
    return found


def final_stage() -> list[tuple[str, str]]:
    steps = instructions()
    last_from = max(i for i, (keyword, _) in enumerate(steps) if keyword == "FROM")
    return steps[last_from:]


@pytest.mark.slow  # runs hadolint
def test_hadolint_finds_nothing() -> None:
    done = run_tool(tool("hadolint"), "--failure-threshold", "style", "--no-color", str(DOCKERFILE))
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.strip() == ""


def test_every_hadolint_ignore_is_explained() -> None:
    lines = DOCKERFILE.read_text(encoding="utf-8").splitlines()
    for number, line in enumerate(lines):
        if "hadolint ignore" in line:
            before = lines[number - 1].strip() if number else ""
            assert before.startswith("#") and "hadolint" not in before, (
                f"line {number + 1}: an ignore needs a comment just above saying why"
            )


def test_two_stages_and_the_runtime_copies_only_the_virtualenv() -> None:
    froms = [args for keyword, args in instructions() if keyword == "FROM"]
    assert len(froms) == 2
    assert all(args.startswith("${PYTHON_IMAGE}") for args in froms)
    assert re.search(r"ARG PYTHON_IMAGE=python:3\.11-slim", DOCKERFILE.read_text())
    runtime = final_stage()
    copies = [args for keyword, args in runtime if keyword == "COPY"]
    assert copies == ["--from=build /opt/venv /opt/venv"]
    # No compiler or package manager work in the final stage.
    runs = " ".join(args for keyword, args in runtime if keyword == "RUN")
    assert not re.search(r"apt-get|apk |gcc|build-essential|pip install", runs)


def test_dependencies_come_from_the_pinned_constraints() -> None:
    runs = [args for keyword, args in instructions() if keyword == "RUN" and "pip install" in args]
    assert len(runs) == 1
    assert '-c deploy/constraints.txt ".[server]"' in runs[0], "the service's dependencies"
    assert "--only-binary=:all:" in runs[0], "no compiler needed, none used"
    assert runs[0].endswith("pip uninstall --yes --quiet pip setuptools"), (
        "no installer at run time"
    )


def test_runs_as_a_fixed_non_root_user() -> None:
    users = [args for keyword, args in final_stage() if keyword == "USER"]
    assert len(users) == 1
    uid, _, gid = users[0].partition(":")
    assert uid.isdigit() and int(uid) > 0, "numeric, so runAsNonRoot can check it"
    assert gid.isdigit() and int(gid) > 0


def test_one_image_whose_command_picks_the_process() -> None:
    runtime = dict(final_stage())
    assert json.loads(runtime["ENTRYPOINT"]) == ["gomoku-archive"]
    default = json.loads(runtime["CMD"])
    assert default == ["serve", "--host", "0.0.0.0"]
    assert parse_command(default).port is None, "the port is the PORT setting"
    assert image_settings().port == 8080
    for command in (["worker"], ["migrate"], ["worker", "--check"]):
        parse_command(command)
    assert runtime["EXPOSE"] == str(image_settings().port)


def image_settings() -> Settings:
    """The settings the image's ENV gives the program."""
    env = dict(final_stage())["ENV"]
    pairs = dict(re.findall(r"([A-Z_]+)=(\S+)", env))
    return Settings.from_env({k: v for k, v in pairs.items() if k != "PATH"}, isatty=False)


def test_healthcheck_follows_the_port_setting() -> None:
    healthcheck = dict(final_stage())["HEALTHCHECK"]
    command = json.loads(healthcheck.split("CMD", 1)[1])
    assert command[0] == "gomoku-archive"
    check = parse_command(command[1:])
    assert (check.command, check.check, check.port) == ("serve", True, None)
    assert "8080" not in healthcheck, "the port comes from PORT, not the check's text"
    assert dict(final_stage())["EXPOSE"] == str(image_settings().port)


def test_oci_labels() -> None:
    labels = " ".join(args for keyword, args in final_stage() if keyword == "LABEL")
    for key in ("title", "description", "version", "revision", "created", "licenses"):
        assert f"org.opencontainers.image.{key}=" in labels


def test_the_deployment_page_describes_this_image() -> None:
    text = " ".join(page("operators/deployment.md").split())
    base = re.search(r"ARG PYTHON_IMAGE=(\S+)", DOCKERFILE.read_text(encoding="utf-8"))
    assert base and f"Two stages on `{base[1]}`" in text
    install = next(args for keyword, args in instructions() if "pip install" in args)
    pip = re.search(r"pip install --no-cache-dir (--only-binary=:all: -c \S+ \S+)", install)
    assert pip and f"`pip install {pip[1]}`" in text
    uid = dict(final_stage())["USER"].partition(":")[0]
    assert f"runs as uid/gid {uid}" in text
    default = " ".join(json.loads(dict(final_stage())["CMD"]))
    assert f"# {default}" in text
    assert "docker build -f deploy/Dockerfile" in text


def test_the_documentation_label_names_the_deployment_page() -> None:
    labels = " ".join(args for keyword, args in final_stage() if keyword == "LABEL")
    found = re.search(r'org\.opencontainers\.image\.documentation="([^"]+)"', labels)
    assert found and found[1] == "docs/operators/deployment.md"
    assert (DOCS / "operators" / "deployment.md").is_file()


def test_dockerignore_keeps_the_build_context_to_the_sources() -> None:
    rules = (ROOT / ".dockerignore").read_text(encoding="utf-8").split()
    assert rules[rules.index("*")] == "*", "everything excluded first"
    allowed = {rule[1:] for rule in rules if rule.startswith("!")}
    copied = {
        part
        for keyword, args in instructions()
        if keyword == "COPY" and not args.startswith("--from")
        for part in args.split()[:-1]
    }
    assert copied <= {path.rstrip("/") for path in allowed}


def test_the_image_carries_the_tools_wheel_where_the_api_looks() -> None:
    """The light wheel is built from the same source in the build stage, into the virtualenv
    the runtime stage copies, at the path ``tools_wheel.SHARE_DIR`` names for that prefix."""
    from gomoku_archive.web.tools_wheel import SHARE_DIR

    runs = [args for keyword, args in instructions() if keyword == "RUN" and "pip wheel" in args]
    assert len(runs) == 1
    folder = "/opt/venv/" + SHARE_DIR.relative_to(SHARE_DIR.parents[2]).as_posix()
    assert f"--wheel-dir {folder} ." in runs[0]
    assert "--no-deps" in runs[0]
