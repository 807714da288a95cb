"""Why a benchmark server did not start, in words a person can act on: the last lines of its
output, and for a Python without the ``fast`` extra (uvloop + httptools, which the bare baseline
runs on) the install hint ``bench_http.py`` prints. Used by :mod:`benchlib` (``Server``,
``serve_baseline``) and ``bench_start.py``."""

from __future__ import annotations

__all__ = ["FAST_HINT", "FAST_MODULES", "TAIL_LINES", "failure_report", "missing_fast"]

#: The ``fast`` extra's modules, which the bare baseline (and a fair comparison) runs on.
FAST_MODULES = ("uvloop", "httptools")
#: How to install them (``pyproject.toml``, ``[project.optional-dependencies] fast``).
FAST_HINT = "pip install 'mockoss[fast]'"
#: Lines of a server's output a failure report shows.
TAIL_LINES = 20


def missing_fast(prog: str) -> str | None:
    """The message for a Python without the ``fast`` extra, ``None`` when it has it:
    ``bench_x: uvloop, httptools not installed; both servers must run on uvloop + httptools for a
    fair comparison: pip install 'mockoss[fast]'`` (``bench_http.py`` prints the same)."""
    import importlib.util

    missing = [name for name in FAST_MODULES if importlib.util.find_spec(name) is None]
    if not missing:
        return None
    return (
        f"{prog}: {', '.join(missing)} not installed; both servers must run on uvloop + httptools "
        f"for a fair comparison: {FAST_HINT}"
    )


def failure_report(name: str, what: str, output: list[str], returncode: int | None) -> str:
    """Why a server subprocess failed: ``what`` happened (``"exited before its first 200"``), its
    exit status, the last :data:`TAIL_LINES` lines of its output (stdout and stderr), and, when
    they show a module of the ``fast`` extra missing, :data:`FAST_HINT`."""
    status = f" (exit status {returncode})" if returncode is not None else ""
    tail = "".join(output[-TAIL_LINES:]).rstrip("\n") or "(no output)"
    report = f"{name} {what}{status}; the last lines of its output:\n{tail}"
    if any(f"No module named '{module}'" in tail for module in FAST_MODULES) and FAST_HINT not in tail:
        report += f"\nThe bare baseline runs on uvloop + httptools (the fast extra): {FAST_HINT}"
    return report
