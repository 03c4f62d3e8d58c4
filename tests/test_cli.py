"""The CLI as a user runs it: exit codes, one clear line per error, never a traceback."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT, SEED_BANK, dpassess
from dpassess import __version__
from dpassess.model.schemas import json_schema
from strategies import write_bank


def run(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    """The command in this process (conftest.dpassess)."""
    return dpassess(*args, cwd=cwd)


def test_version_through_the_installed_entry_point():
    """A real process: `python -m dpassess` (the console script's `main`)."""
    r = subprocess.run([sys.executable, "-m", "dpassess", "--version"], cwd=ROOT,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stdout.startswith(f"dpassess {__version__}")
    assert run("--version").stdout == r.stdout


def test_the_help_names_every_export_format():
    from dpassess.export.formats import FORMATS

    shown = {"qti21": "QTI 2.1", "moodle-xml": "Moodle XML", "gift": "GIFT", "canvas": "Canvas"}
    assert set(FORMATS) == set(shown)
    first = " ".join(run("--help").stdout.split("\n\n")[1].split())
    for name in FORMATS:
        assert shown[name] in first, (name, first)


def test_version():
    # run from this checkout: the version, and the commit git says the checkout is at
    r = run("--version")
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True,
                          text=True, check=True).stdout.strip()
    assert r.returncode == 0 and r.stdout.strip() == f"dpassess {__version__} (commit {head[:12]})"


def test_version_names_the_commit_pip_installed_from_git(tmp_path):
    # pip records an install from git in direct_url.json (PEP 610); a wheel or an sdist has none
    from dpassess.cli import _commit

    site = tmp_path / "site-packages"
    (site / "dpassess" / "cli").mkdir(parents=True)
    record = site / f"dpassess-{__version__}.dist-info" / "direct_url.json"
    record.parent.mkdir()
    sha = "0123456789abcdef0123456789abcdef01234567"
    record.write_text(json.dumps({"url": "https://example.org/dpassess.git",
                                  "vcs_info": {"vcs": "git", "commit_id": sha}}))
    import dpassess.cli

    here = dpassess.cli.__file__
    try:
        dpassess.cli.__file__ = str(site / "dpassess" / "cli" / "__init__.py")
        assert _commit(__version__) == sha
        record.write_text(json.dumps({"url": "file:///tmp/x.whl", "archive_info": {}}))
        assert _commit(__version__) is None
    finally:
        dpassess.cli.__file__ = here


@pytest.mark.parametrize("kind", ["item", "bank"])
def test_schema_is_json_schema_and_the_published_copy_is_fresh(kind):
    r = run("schema", kind)
    assert r.returncode == 0
    printed = json.loads(r.stdout)
    assert printed == json_schema(kind)
    assert printed["$schema"].endswith("2020-12/schema")
    published = json.loads((ROOT / "docs" / "schema" / f"{kind}.schema.json").read_text())
    assert published == printed, f"regenerate: dpassess schema {kind} > docs/schema/{kind}.schema.json"


def test_every_item_file_declares_the_schema_for_editors():
    for f in sorted(SEED_BANK.glob("*.yaml")):
        first = f.read_text(encoding="utf-8").splitlines()[0]
        assert first.startswith("# yaml-language-server: $schema=../../docs/schema/"), f


def test_check_seed_bank_ok():
    r = run("check", str(SEED_BANK))
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "ok: 1 bank, 8 items"


def test_check_reports_all_errors_with_exit_1_and_no_traceback(tmp_path):
    root = write_bank(tmp_path / "b", [])
    (root / "x.yaml").write_text("id: [\n", encoding="utf-8")
    (root / "y.yaml").write_text("id: !!python/name:os.system\n", encoding="utf-8")
    r = run("check", str(root))
    assert r.returncode == 1
    lines = r.stderr.strip().splitlines()
    assert lines[0].startswith(f"{root}/x.yaml:2:1: invalid YAML")
    assert lines[1].startswith(f"{root}/y.yaml:1:5: YAML tag")
    assert lines[-1] == "error: 2 errors while loading the bank"
    assert "Traceback" not in r.stderr


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (("check", "no/such/dir"), "no/such/dir: no such file or directory"),
        (("schema", "nonsense"), "nonsense"),
        (("check", "--bogus"), "No such option"),
    ],
)
def test_usage_errors_exit_2(args, fragment):
    r = run(*args)
    assert r.returncode == 2
    assert fragment in r.stderr
    assert "Traceback" not in r.stderr


def test_export_names_the_bank_of_a_bank_level_warning(tmp_path: Path) -> None:
    """With several banks, a warning about a whole bank says which (as `dpassess build` does):
    GIFT cannot keep an item's authored order, and says so once for the bank."""
    assert run("init", "items/ordered", cwd=tmp_path).returncode == 0
    item = tmp_path / "items" / "ordered" / "01-middle-value.yaml"
    item.write_text(item.read_text().replace("key: median\n", "key: median\nshuffle: false\n"))
    r = run("export", "items", "-f", "gift", "-l", "en", "-o", "out", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "warning: items/ordered: gift: shuffle:" in r.stderr.splitlines()[0]


def test_build_prints_every_blueprint_error_at_its_line_and_exits_2(tmp_path: Path) -> None:
    """A blueprint error in `build` is printed as `assemble` prints it: one diagnostic a line."""
    bps = tmp_path / "bps"
    bps.mkdir()
    (bps / "bad.yaml").write_text(
        f"schema: 1\nid: bad\nbank: {SEED_BANK}\nforms: 1\nitems: 2\nanchors: [nope, nix]\n",
        encoding="utf-8")
    r = run("build", "--out", str(tmp_path / "out"), "--blueprints", str(bps), "--no-cache")
    assert r.returncode == 2, r.stderr
    assert r.stderr.splitlines() == [
        f"{bps}/bad.yaml:6:11: anchors[0]: unknown item 'nope'",
        f"{bps}/bad.yaml:6:17: anchors[1]: unknown item 'nix'",
        "error: 2 errors in the blueprint",
    ]


def test_import_refuses_to_overwrite_and_says_how_to(tmp_path: Path) -> None:
    """The library says what would be overwritten; the CLI adds the flag that allows it."""
    gift = ROOT / "tests" / "fixtures" / "moodle" / "questions.gift.txt"
    args = ("import", str(gift), "--from", "gift", "--lang", "en", "--bank", str(tmp_path / "b"))
    first = run(*args)
    assert first.returncode == 0, first.stderr
    before = {p: p.read_bytes() for p in (tmp_path / "b").rglob("*") if p.is_file()}
    again = run(*args)
    assert again.returncode == 2
    [error] = [line for line in again.stderr.splitlines() if line.startswith("error:")]
    assert error.startswith(f"error: {tmp_path / 'b'}/") and error.endswith(
        "would be overwritten); use --force to overwrite"), error
    assert {p: p.read_bytes() for p in (tmp_path / "b").rglob("*") if p.is_file()} == before
    assert run(*args, "--force").returncode == 0


def test_qti_maths_as_tex_for_mathjax_players(tmp_path):
    """`--maths tex`: the package keeps each formula's TeX between delimiters (no MathML) and
    still validates; other formats refuse the option (they always keep the TeX)."""
    import zipfile

    from lxml import etree

    bank = ROOT / "tests" / "banks" / "maths"
    out = {}
    for mode in ("mathml", "tex"):
        r = run("export", str(bank), "-f", "qti21", "--lang", "en", "--maths", mode,
                "-o", str(tmp_path / f"{mode}.zip"))
        assert r.returncode == 0, r.stderr
        with zipfile.ZipFile(tmp_path / f"{mode}.zip") as z:
            out[mode] = b"".join(z.read(n) for n in z.namelist() if n.startswith("items/"))
    assert b"<m:math" in out["mathml"] and b"<m:math" not in out["tex"]
    assert rb"\(" in out["tex"] or rb"\[" in out["tex"]
    schema = etree.XMLSchema(etree.parse(str(ROOT / "tests/schemas/qti21/imsqti_v2p1p2.xsd")))
    with zipfile.ZipFile(tmp_path / "tex.zip") as z:
        for name in z.namelist():
            if name.startswith("items/") and name.endswith(".xml"):
                schema.assertValid(etree.fromstring(z.read(name)))
    r = run("export", str(bank), "-f", "gift", "--maths", "tex", "-o", str(tmp_path / "g"))
    assert r.returncode == 2 and "only QTI 2.1 writes MathML" in r.stderr


def test_the_checkout_commit_is_read_from_git_files_as_git_reads_it(tmp_path):
    # a branch as a loose ref, then packed (`git gc` packs refs), then a detached HEAD, and a
    # linked worktree (a `.git` file): each gives what `git rev-parse HEAD` gives
    from dpassess.cli import _head

    def git(*args: str, cwd: Path = tmp_path / "r") -> str:
        return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=cwd,
                              capture_output=True, text=True, check=True).stdout.strip()

    repo = tmp_path / "r"
    repo.mkdir()
    git("init", "-q", "-b", "main")
    git("commit", "-q", "--allow-empty", "-m", "one")
    assert _head(repo / ".git") == git("rev-parse", "HEAD")
    git("pack-refs", "--all")
    assert not (repo / ".git" / "refs" / "heads" / "main").exists()
    assert _head(repo / ".git") == git("rev-parse", "HEAD")
    first = git("rev-parse", "HEAD")
    git("commit", "-q", "--allow-empty", "-m", "two")
    git("checkout", "-q", first)
    assert _head(repo / ".git") == first
    git("worktree", "add", "-q", "-b", "side", str(tmp_path / "w"), "main")
    assert _head(tmp_path / "w" / ".git") == git("rev-parse", "HEAD", cwd=tmp_path / "w") != first
