"""Optional packages -> whether they are installed, and the error that names the extra
installing them (`pip install "dpassess[assemble]"`).

`pip install dpassess` is what linting and exporting need; the form assembler's solver
(ortools, about 80 MB) and the PDF typesetter (typst, about 80 MB) come with extras, so that a CI
job which only lints a bank does not download them.
"""

from __future__ import annotations

from importlib.util import find_spec

from dpassess.diagnostics import UsageError

#: Each optional package and the extra of pyproject.toml that installs it.
EXTRAS = {"ortools": "assemble", "typst": "pdf"}


def installed(package: str) -> bool:
    """Whether `package` can be imported (found, not imported)."""
    try:
        return find_spec(package) is not None
    except (ImportError, ValueError):
        return False


def install_hint(package: str) -> str:
    """The command that installs `package` with dpassess."""
    return f'pip install "dpassess[{EXTRAS[package]}]"'


def missing(package: str, needed_for: str) -> UsageError:
    """The error for a job that needs `package` where it is not installed (exit 2)."""
    return UsageError(f"{needed_for} needs the optional package {package}, which is not "
                      f"installed: {install_hint(package)} (or \"dpassess[all]\")")


def require(package: str, needed_for: str) -> None:
    """Raise `missing(...)` unless `package` is installed."""
    if not installed(package):
        raise missing(package, needed_for)
