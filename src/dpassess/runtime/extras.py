"""Optional packages -> whether they are installed, and the error that names the extra
installing them (`pip install "dpassess[assemble] @ git+<where dpassess came from>"`).

The bare package is what linting and exporting need; the form assembler's solver
(ortools, about 80 MB) and the PDF typesetter (typst, about 80 MB) come with extras, so that a CI
job which only lints a bank does not download them.
"""

from __future__ import annotations

import json
from importlib.util import find_spec

from dpassess.diagnostics import UsageError

#: Each optional package and the extra of pyproject.toml that installs it.
EXTRAS = {"ortools": "assemble", "typst": "pdf", "cv2": "scan", "pypdfium2": "scan"}


def installed(package: str) -> bool:
    """Whether `package` can be imported (found, not imported)."""
    try:
        return find_spec(package) is not None
    except (ImportError, ValueError):
        return False


def install_hint(package: str) -> str:
    """The command that installs `package` with dpassess, from where this dpassess came from
    (pip's record of the install, PEP 610): dpassess is not on a package index, so a bare
    `pip install "dpassess[extra]"` would look for it there."""
    extra = EXTRAS[package]
    source = _source()
    if source is None:
        return f'pip install "dpassess[{extra}] @ git+<repository URL>"'
    if source.startswith("file://") and "git+" not in source:
        folder = source.removeprefix("file://")
        return f'pip install -e "{folder}[{extra}]"'
    return f'pip install "dpassess[{extra}] @ {source}"'


def _source() -> str | None:
    """Where pip installed dpassess from (`git+URL@commit` or `file://folder`), if it says."""
    from importlib.metadata import PackageNotFoundError, distribution

    try:
        record = distribution("dpassess").read_text("direct_url.json")
        data = json.loads(record) if record else None
    except (PackageNotFoundError, OSError, ValueError):
        return None
    if not isinstance(data, dict) or not isinstance(data.get("url"), str):
        return None
    vcs = data.get("vcs_info")
    if isinstance(vcs, dict) and vcs.get("vcs") == "git":
        commit = vcs.get("commit_id")
        return f"git+{data['url']}" + (f"@{commit}" if isinstance(commit, str) else "")
    if data["url"].startswith("file://") and isinstance(data.get("dir_info"), dict):
        return str(data["url"])
    return None


def missing(package: str, needed_for: str) -> UsageError:
    """The error for a job that needs `package` where it is not installed (exit 2)."""
    return UsageError(f"{needed_for} needs the optional package {package}, which is not "
                      f"installed: {install_hint(package)} (the `all` extra has every optional part)")


def require(package: str, needed_for: str) -> None:
    """Raise `missing(...)` unless `package` is installed."""
    if not installed(package):
        raise missing(package, needed_for)
