"""How to install one of mockoss's extras (``vllm``), in words that cannot fetch a stranger's package.

mockoss is not on the package index (README: Install into your project, from a clone), so ``pip install 'mockoss[vllm]'``
would install whatever else carries that name. The hint names the mockoss checkout instead:
the one this mockoss runs from when it is an editable or source install (``pip install -e
'/home/me/mockoss[vllm]'``), else a placeholder for it. Given the Python the extra is for (the
launcher's ``--vllm-python``), the hint runs that Python's pip (``/opt/venv/bin/python -m pip
install …``): a bare ``pip`` installs into whichever environment is first on ``PATH``.
"""

from __future__ import annotations

import json
import shlex
import tomllib
from importlib import metadata
from pathlib import Path
from urllib.parse import unquote, urlparse

__all__ = ["checkout", "install_extra_hint"]


def _is_checkout(path: Path) -> bool:
    """Whether ``path`` is a mockoss source tree: its ``pyproject.toml`` (parsed as TOML) names the
    project mockoss (``[project] name``, PEP 621) and it holds ``mockoss/__init__.py``. A file
    that is missing, unreadable or not TOML is no checkout."""
    try:
        with (path / "pyproject.toml").open("rb") as file:
            project = tomllib.load(file).get("project")
    except (OSError, tomllib.TOMLDecodeError):
        return False
    name = project.get("name") if isinstance(project, dict) else None
    return name == "mockoss" and (path / "mockoss" / "__init__.py").is_file()


def checkout() -> tuple[Path, bool] | None:
    """The mockoss source tree this mockoss was installed from and whether the install is editable,
    or ``None``.

    Either the tree the package is imported from (an editable install, or ``PYTHONPATH`` at a
    clone: editable), or the local directory of ``pip install /path/to/mockoss``, as pip records it
    in the distribution's ``direct_url.json`` (PEP 610, ``dir_info.editable``), if that tree is
    still there.
    """
    here = Path(__file__).resolve().parents[2]  # mockoss/engines/install_hint.py → the tree holding mockoss/
    if _is_checkout(here):
        return here, True
    try:
        record = json.loads(metadata.distribution("mockoss").read_text("direct_url.json") or "{}")
        url = urlparse(record.get("url", ""))
        editable = bool(record.get("dir_info", {}).get("editable", False))
    except (metadata.PackageNotFoundError, ValueError, AttributeError):
        return None
    if url.scheme != "file":
        return None
    path = Path(unquote(url.path))
    return (path, editable) if _is_checkout(path) else None


def install_extra_hint(extra: str, python: str | None = None) -> str:
    """The command that installs ``extra`` for this mockoss, in backticks: ``pip install -e
    '/home/me/mockoss[vllm]'`` (an editable install of that checkout; without ``-e`` when mockoss
    was installed from it without), else ``pip install '<path to your mockoss clone>[vllm]'`` and
    where mockoss comes from. Never ``mockoss[vllm]`` from the package index.

    ``python``: the interpreter to install into (a path or command, e.g. the launcher's
    ``--vllm-python``); the command is then ``<python> -m pip install …``, ``python``
    shell-quoted (``shlex.quote``), so that pip installs where the probe failed."""
    pip = "pip" if python is None else f"{shlex.quote(python)} -m pip"
    found = checkout()
    if found is None:
        return (
            f"`{pip} install '<path to your mockoss clone>[{extra}]'` "
            "(mockoss installs from a clone; README: Install into your project)"
        )
    tree, editable = found
    return f"`{pip} install {'-e ' if editable else ''}{shlex.quote(f'{tree}[{extra}]')}`"
