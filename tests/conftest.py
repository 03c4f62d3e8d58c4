"""Shared test set-up: hypothesis profiles and their seed, `--update-goldens`, bank helpers.

Profiles (HYPOTHESIS_PROFILE, or pytest's --hypothesis-profile): `dev` (the default) draws new
examples on every run and keeps failures in .hypothesis/; `ci` (set by .ci/run) is reproducible:
no example database, and one seed for the whole run, derived from the commit under test, so every
commit tries new examples and any run can be replayed with the `--hypothesis-seed=N` printed in
the report header and under each failed property. Example counts stay bounded so `make test`
stays fast.
"""

from __future__ import annotations

import atexit
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, core, is_hypothesis_test, settings

sys.path.insert(0, str(Path(__file__).parent))

# derandomize=False said outright: where the environment says CI (CI=true), hypothesis loads a
# built-in "ci" profile of its own that derandomizes, and profiles inherit from the loaded one.
settings.register_profile(
    "dev", max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow],
    derandomize=False,
)
settings.register_profile(
    "ci", max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow],
    database=None, print_blob=True, derandomize=False,
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))

# The user's cache folder (where the key that authenticates `.dpassess_cache` files lives): a
# fresh folder, so that a test run never makes or reads the user's own key.
_user_cache = tempfile.mkdtemp(prefix="dpassess-user-cache-")
os.environ["XDG_CACHE_HOME"] = _user_cache
atexit.register(shutil.rmtree, _user_cache, ignore_errors=True)

ROOT = Path(__file__).resolve().parent.parent
SEED_BANK = ROOT / "items" / "data-parallelism"


# --- the hypothesis seed of a ci run ------------------------------------------------------------


def seed_for(root: Path) -> tuple[int, str]:
    """The seed for the code at `root` and where it came from: the commit hash (`git rev-parse
    HEAD`) or, outside a git checkout, a hash of the source and test files."""
    try:
        commit = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], check=True,
                                capture_output=True, text=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        commit = ""
    if commit:
        return int(commit[:8], 16), f"commit {commit[:12]}"
    h = hashlib.blake2b(digest_size=16)
    for folder in ("src", "tests"):
        for p in sorted((root / folder).rglob("*.py")):
            h.update(p.relative_to(root).as_posix().encode() + b"\0" + p.read_bytes() + b"\0")
    digest = h.hexdigest()
    return int(digest[:8], 16), f"source hash {digest[:12]}"


SEED = pytest.StashKey[tuple[str, str]]()  # (the run's seed, where it came from)


def _profile(config: pytest.Config) -> str:
    return config.getoption("--hypothesis-profile") or os.environ.get("HYPOTHESIS_PROFILE", "dev")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--update-goldens", action="store_true", default=False,
                     help="rewrite the golden files under tests/golden/ from today's output "
                          "(review the diff before committing)")


def pytest_configure(config: pytest.Config) -> None:
    given = config.getoption("--hypothesis-seed")
    if given is not None:
        config.stash[SEED] = (str(given), "given")
    elif _profile(config) == "ci":
        seed, origin = seed_for(ROOT)
        config.option.hypothesis_seed = seed
        core.global_force_seed = seed  # in case hypothesis's own configure has already run
        config.stash[SEED] = (str(seed), f"from {origin}")


def _seed_line(config: pytest.Config) -> str:
    if SEED not in config.stash:
        return (f"hypothesis seed: new on every run (profile {_profile(config)}); a failure prints "
                "how to replay")
    seed, origin = config.stash[SEED]
    return f"hypothesis seed {seed} ({origin}): replay with --hypothesis-seed={seed}"


def pytest_report_header(config: pytest.Config) -> str:
    return _seed_line(config)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter,
                            config: pytest.Config) -> None:
    """The seed again at the end, where failures are read (and `-q` hides the header); one line
    when the browser tests skipped for want of a browser."""
    terminalreporter.write_line(_seed_line(config))
    reasons = {str(r.longrepr[2]) for r in terminalreporter.stats.get("skipped", [])
               if "test_preview_browser" in r.nodeid and isinstance(r.longrepr, tuple)
               and "browser tests" in str(r.longrepr[2])}
    for reason in sorted(reasons):
        terminalreporter.write_line(reason.removeprefix("Skipped: "))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]):
    report = yield
    if (report.failed and SEED in item.config.stash and isinstance(item, pytest.Function)
            and is_hypothesis_test(item.obj)):
        seed, _ = item.config.stash[SEED]
        report.sections.append(("hypothesis seed", (
            f"replay: HYPOTHESIS_PROFILE={_profile(item.config)} "
            f"pytest '{item.nodeid}' --hypothesis-seed={seed}")))
    return report


def files(root: Path) -> dict[str, bytes]:
    """Every file below `root`: its POSIX path relative to `root` -> its bytes (sorted)."""
    return {p.relative_to(root).as_posix(): p.read_bytes()
            for p in sorted(root.rglob("*")) if p.is_file()}


def dpassess(*args: str | Path, cwd: Path | None = None, env: dict[str, str] | None = None,
             input: str | None = None) -> subprocess.CompletedProcess[str]:
    """`dpassess ARGS` as a user runs it, in this process: `dpassess.cli.main` (the console
    script's function: its exit codes and its one-line errors) inside click's `CliRunner`
    isolation (stdin, stdout, stderr and the environment swapped), in `cwd`. `env` is the
    whole environment, as for subprocess. Much faster than a new interpreter; the tests of the
    entry point itself, signals and start-up imports start a real process instead."""
    import contextlib
    import signal

    from click.testing import CliRunner

    from dpassess.cli import main

    overrides: dict[str, str | None] | None = None
    if env is not None:
        overrides = {k: None for k in os.environ if k not in env}
        overrides |= env
    handlers = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
    with contextlib.chdir(cwd or Path.cwd()), \
            CliRunner().isolation(input=input, env=overrides) as (out, err, _):
        try:
            main([str(a) for a in args])
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        finally:
            for s, h in handlers.items():
                signal.signal(s, h)
            sys.stdout.flush()  # print() writes through the isolation's buffered wrapper
            sys.stderr.flush()
        stdout, stderr = out.getvalue().decode("utf-8"), err.getvalue().decode("utf-8")
    return subprocess.CompletedProcess(["dpassess", *map(str, args)], code, stdout, stderr)


@pytest.fixture
def built(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str]]:
    """(format, item id) of every item question an exporter builds from its model (not taken
    from the previous output file), in the order they are built."""
    from dpassess.export.canvas import qti12
    from dpassess.export.moodle import gift, moodle_xml
    from dpassess.export.qti import qti21

    seen: list[tuple[str, str]] = []

    def spy(fmt: str, fn: Callable[..., Any], at: int) -> Callable[..., Any]:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            seen.append((fmt, args[at].id))
            return fn(*args, **kwargs)
        return wrapper

    monkeypatch.setattr(qti21, "_item", spy("qti21", qti21._item, 1))
    monkeypatch.setattr(moodle_xml._Writer, "question",
                        spy("moodle-xml", moodle_xml._Writer.question, 1))
    monkeypatch.setattr(gift, "_question", spy("gift", gift._question, 1))
    monkeypatch.setattr(qti12, "question", spy("canvas", qti12.question, 0))
    return seen
