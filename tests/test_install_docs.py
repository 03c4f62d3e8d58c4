"""The install commands the README and the docs show, read out of them: every one must work on
the repository as it is published (its default branch, `main`, and no tags). Running them is
slow (tests/test_install.py, `make test-install`); here, that they are found and name nothing the
published repository lacks (a release tag)."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from conftest import ROOT

#: Where a user reads how to install dpassess.
DOCS = (ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md")), ROOT / ".pre-commit-hooks.yaml")

#: `pip install ...` / `pipx install ...`, to the end of the line or of an inline code span.
_INSTALL = re.compile(r"(?:\S*/)?pipx? install\s[^`\n]*")
#: A shell or YAML comment after a command.
_COMMENT = re.compile(r"\s+#\s.*$")
#: The start of a command line that sets up what the install runs in (`python3 -m venv .venv &&`).
_SETUP = re.compile(r"python3 -m venv \S+ && ")


def install_commands() -> dict[str, str]:
    """Each distinct install command the docs show -> where it is first shown (`file:line`),
    with a shell set-up written before it on the same line (`python3 -m venv .venv && ...`)."""
    found: dict[str, str] = {}
    for path in DOCS:
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            line = _COMMENT.sub("", line)
            m = _INSTALL.search(line)
            if not m:
                continue
            command = m.group(0).strip()
            setup = _SETUP.search(line[:m.start()])
            if setup:
                command = setup.group(0) + command
            if command.endswith(" install"):  # prose ("pip install fails")
                continue
            found.setdefault(command, f"{path.relative_to(ROOT)}:{n}")
    return found


def pre_commit_configs() -> dict[str, str]:
    """Each `.pre-commit-config.yaml` the docs show (a YAML block with `repos:`, or the example
    commented in `.pre-commit-hooks.yaml`) -> where it is shown."""
    out: dict[str, str] = {}
    for path in DOCS:
        text = path.read_text(encoding="utf-8")
        if path.suffix == ".yaml":
            lines = [ln[1:] for ln in text.splitlines() if ln.startswith("#")]
            start = next((i for i, ln in enumerate(lines) if ln.strip() == "repos:"), None)
            if start is not None:
                block = []
                for ln in lines[start:]:
                    if not ln.strip():
                        break
                    block.append(ln)
                indent = min(len(b) - len(b.lstrip()) for b in block)
                out["\n".join(b[indent:] for b in block) + "\n"] = f"{path.name}"
            continue
        for m in re.finditer(r"```ya?ml\n(.*?)```", text, re.S):
            if re.search(r"^repos:", m.group(1), re.M):
                line = text[:m.start()].count("\n") + 2
                out[m.group(1)] = f"{path.relative_to(ROOT)}:{line}"
    return out


def test_the_docs_show_installs_from_the_branch_or_a_commit_never_a_tag() -> None:
    commands = install_commands()
    assert len(commands) >= 4, commands  # pipx, pip from git, pip pinned, pip from a clone
    assert any(c.startswith("pipx install") for c in commands)
    assert any("@<commit>" in c for c in commands)
    for command, where in commands.items():
        from_clone = re.search(r'install (-e )?(\.|"\.\[[a-z,]+\]")$', command)
        assert "dpassess" in command or "<repository URL>" in command or from_clone, (
            where, command)
        assert not re.search(r"@v?\d+\.\d+", command), f"{where}: {command} names a tag"
        if "git+" not in command:
            assert from_clone, (
                f"{where}: {command} installs from an index dpassess is not on")
    configs = pre_commit_configs()
    assert len(configs) >= 2, configs
    for config, where in configs.items():
        [repo] = yaml.safe_load(config)["repos"]
        assert repo["rev"] == "<commit>", f"{where}: rev: {repo['rev']} (no tags are published)"


def test_no_doc_sends_a_user_to_a_release_tag() -> None:
    for path in DOCS:
        text = path.read_text(encoding="utf-8")
        assert not re.search(r"git\+\S*@v\d|rev: v\d|pip install dpassess\b", text), path


def substitute(text: str, url: str, commit: str) -> str:
    """A command or config of the docs with its placeholders filled in."""
    for placeholder in ("<repository URL>", "<this repository's URL>", "<URL>"):
        text = text.replace(placeholder, url)
    return text.replace("<commit>", commit)


def published(tmp: Path) -> tuple[Path, str]:
    """The repository as a user finds it: a bare repository with this checkout's HEAD as its
    default branch `main`, and no tags. Returns its path and the commit."""
    import subprocess

    repo = tmp / "published.git"
    subprocess.run(["git", "init", "--quiet", "--bare", "--initial-branch=main", str(repo)],
                   check=True)
    subprocess.run(["git", "push", "--quiet", "--no-tags", str(repo), "HEAD:refs/heads/main"],
                   cwd=ROOT, check=True, capture_output=True)
    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, check=True,
                            capture_output=True, text=True).stdout.strip()
    tags = subprocess.run(["git", "tag"], cwd=repo, capture_output=True, text=True).stdout
    assert tags == ""
    return repo, commit
