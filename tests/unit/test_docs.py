"""The README stays a front door and the manual stays whole: a short README that shows exactly
the two set-up commands and whose links resolve, every page of docs/ in mkdocs.yml's nav (a page
outside it is built but unreachable), and every setting documented where operators look."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import unquote

import pytest
import yaml

from tests.docs_pages import DOCS, MKDOCS_YML, README, ROOT, code_blocks, commands, section
from tests.support import settings_read

SET_UP_COMMANDS = ["bash deploy/demo.sh", "bash deploy/test.sh"]
LINK = re.compile(r"\]\(([^)\s]+)\)")


def nav_pages(entries: object) -> list[str]:
    """The page paths of an mkdocs nav: a list of pages, {title: page} or {title: [sub-nav]}."""
    if isinstance(entries, str):
        return [entries]
    if isinstance(entries, list):
        return [path for entry in entries for path in nav_pages(entry)]
    if isinstance(entries, dict):
        return [path for value in entries.values() for path in nav_pages(value)]
    raise AssertionError(f"unexpected nav entry {entries!r}")


def test_the_readme_is_short() -> None:
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 160, f"README.md has {len(lines)} lines: move the detail into docs/"


def test_the_readme_shows_exactly_the_two_set_up_commands() -> None:
    text = README.read_text(encoding="utf-8")
    assert sorted(set(re.findall(r"bash deploy/\S+\.sh", text))) == SET_UP_COMMANDS
    shown = [
        line.split("#")[0].strip()
        for block in code_blocks(text, "sh")
        for line in block.splitlines()
        if line.startswith("bash ")
    ]
    assert shown == SET_UP_COMMANDS


def test_the_readme_links_resolve() -> None:
    text = README.read_text(encoding="utf-8")
    local = [link for link in LINK.findall(text) if "://" not in link]
    assert any(link.startswith("docs/") for link in local)
    for link in local:
        assert (ROOT / link.split("#")[0]).is_file(), f"README.md links to missing {link}"


def test_the_readme_links_every_page() -> None:
    linked = {link.split("#")[0] for link in LINK.findall(README.read_text(encoding="utf-8"))}
    pages = {f"docs/{p.relative_to(DOCS).as_posix()}" for p in DOCS.rglob("*.md")}
    assert sorted(pages - linked) == []


def test_every_page_is_in_the_nav_and_every_nav_entry_is_a_page() -> None:
    config = yaml.safe_load(MKDOCS_YML.read_text(encoding="utf-8"))
    assert config["docs_dir"] == "docs"
    assert config["strict"] is True
    listed = nav_pages(config["nav"])
    assert len(listed) == len(set(listed)), "a page listed twice"
    pages = sorted(p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md"))
    assert sorted(listed) == pages


def test_the_configuration_page_documents_every_setting() -> None:
    read = settings_read()
    assert {"DATABASE_URL", "REDIS_URL", "OPS_TOKEN"} <= read
    table = section("operators/configuration.md", "Settings")
    documented = {
        name
        for row in table.splitlines()
        if row.startswith("| `")
        for name in re.findall(r"`([A-Z][A-Z0-9_]+)`", row.split("|")[1])
    }
    boto3_reads = {name for name in documented if name.startswith("AWS_")}
    assert sorted(read ^ (documented - boto3_reads)) == []


def test_pages_link_each_other_relatively() -> None:
    """Absolute links to the site would break on a code host and in `mkdocs serve`."""
    for path in DOCS.rglob("*.md"):
        for link in LINK.findall(path.read_text(encoding="utf-8")):
            assert not link.startswith("/"), f"{path.relative_to(ROOT)}: {link}"
            assert not re.match(r"(\.\./)*README\.md", link), "the manual stands on its own"


def test_the_two_commands_are_the_same_on_the_home_page() -> None:
    home = code_blocks(section("index.md", "Two commands"), "sh")
    assert len(home) == 1
    commands = [line.split("#")[0].strip() for line in home[0].splitlines()]
    assert [command for command in commands if command] == SET_UP_COMMANDS


@pytest.mark.slow  # builds the whole site: seconds
def test_the_built_site_works_from_disk(tmp_path: Path) -> None:
    """Opened as files (file://), every link of every page reaches a file, not a folder (which
    a browser shows as a listing), and nothing needs a server: no search, whose index loads
    in a web worker that browsers refuse over file://."""
    from mkdocs.commands.build import build
    from mkdocs.config import load_config

    site = tmp_path / "site"
    build(load_config(str(MKDOCS_YML), site_dir=str(site), strict=True))
    # 404.html is a server's page for unknown addresses (its links are absolute on purpose).
    pages = sorted(p for p in site.rglob("*.html") if p.name != "404.html")
    assert len(pages) == len(list(DOCS.rglob("*.md")))
    broken = []
    for html in pages:
        for link in re.findall(r'(?:href|src)="([^"]+)"', html.read_text(encoding="utf-8")):
            target = link.split("#")[0].split("?")[0]
            if not target or "://" in link or link.startswith(("mailto:", "data:")):
                continue
            if not (html.parent / unquote(target)).resolve().is_file():
                broken.append(f"{html.relative_to(site)}: {link}")
    assert broken == []
    assert not (site / "search").exists()


CHECKOUT_INSTALL = re.compile(r'pip install (\S+ )*"\.\[server[a-z,]*\]"')
"""From a checkout (its options, such as ``-c deploy/constraints.txt``, first)."""
SERVED_WHEEL_INSTALL = re.compile(
    r'pip install "gomoku-party-archive\[server\] @ '
    r'https://\S+/database/tools/(gomoku_party_archive-\S+-py3-none-any\.whl|<wheel>)"'
)


def test_every_documented_install_of_the_server_extra_works_before_a_release() -> None:
    """The package is not on the package index yet, so ``pip install
    "gomoku-party-archive[server]"`` (the README's operator line, and two pages') fails: an
    operator's install is from a checkout or the served wheel with the extra
    (tests/integration/test_light_install.py runs the README's), and says the index has none."""
    found = []
    for path in [README, *sorted(DOCS.rglob("*.md"))]:
        for command in commands(path.read_text(encoding="utf-8")):
            if "pip install" in command and "[server" in command:
                found.append(command)
                install = command[command.index("pip install") :]
                assert CHECKOUT_INSTALL.match(install) or SERVED_WHEEL_INSTALL.match(install), (
                    f"{path.relative_to(ROOT)}: {command}"
                )
    assert any(SERVED_WHEEL_INSTALL.match(c) for c in found) and any(
        CHECKOUT_INSTALL.match(c) for c in found
    )
    for path in (README, DOCS / "index.md", DOCS / "operators" / "configuration.md"):
        text = " ".join(path.read_text(encoding="utf-8").split())
        assert "not on the package index yet" in text, path.relative_to(ROOT)
