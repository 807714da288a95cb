"""The file name of ``@pytest.mark.mockoss(cassette=True)``: one per test, and the name older
mockoss versions gave, kept while it is unambiguous.

The name is pytest-recording's (``get_default_cassette_name`` in kiwicom/pytest-recording
``src/pytest_recording/plugin.py``, 0.15.0: ``Class.test_name`` for a method), made safe for a file
name (characters other than letters, digits, ``.``, ``_``, ``-`` become ``-``)::

    test_answer                      -> test_answer.yaml
    TestA::test_x                    -> TestA.test_x.yaml
    test_sum[2-3]                    -> test_sum-2-3.yaml
    test_q[What is 2 + 2?]           -> test_q-What-is-2-2-<8 hex>.yaml

The 8 hex digits (sha256 of the exact ``Class.test[id]``) are added when the parametrisation id
lost characters to the file name or holds an upper-case letter (names that differ only in case
are one file on macOS and Windows). pytest-recording leaves these collisions in (its comment says
the probability is too low); the sixteenth-session breaker (finding 3) hit both with ordinary
params (``"What is 2 + 2?"`` and ``"What is 2 * 2?"``) and two classes with one method name.

``profiles=[...]`` parametrisation is not part of the name: a cassette is recorded once against
the real server (the test id is then ``[real]``) and every profile's test replays that one file
(finding 5a: ``test_prof-real.yaml`` was recorded, ``test_prof-vllm.yaml`` looked for).

Older versions named a cassette ``re.sub("[^A-Za-z0-9._-]+", "-", node.name)``, without the class
(for a ``profiles=`` test: the ``[real]`` name they recorded under). When the new name does not
exist, :func:`locate` uses that old file only if no other test can have had its name, judged from
the test module itself, never from which tests this run selected (``-k``, ``--lf``, a node id or a
CI shard would otherwise change the answer: a review of the first version found ``-k TestB``
replaying TestA's cassette): the test's parametrisation id lost no character to the file name
(an id that did may share the old name with another parameter's), and the function's name is
defined once among the module's functions and test classes (methods inherited included). Otherwise
it is not used and the missing-cassette message says why and what to do.
"""

from __future__ import annotations

import fnmatch
import hashlib
import inspect
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

__all__ = ["Located", "default_name", "legacy_names", "locate"]

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
#: The parameter of ``profiles=`` parametrisation (:func:`mockoss.pytest_plugin.pytest_generate_tests`).
_PROFILE_PARAM = "_mockoss_profile"


def _safe(text: str) -> str:
    return _UNSAFE.sub("-", text).strip("-")


def _swap(ident: str, token: str, new: str) -> str:
    """``ident`` with its ``-``-separated part ``token`` (the profile's id) replaced by ``new``
    (``""``: dropped with its separator)."""
    if ident == token:
        return new
    if ident.startswith(token + "-"):
        return f"{new}-{ident[len(token) + 1 :]}" if new else ident[len(token) + 1 :]
    if ident.endswith("-" + token):
        return f"{ident[: -len(token) - 1]}-{new}" if new else ident[: -len(token) - 1]
    return ident.replace(f"-{token}-", f"-{new}-" if new else "-", 1)


def _parts(node: Any) -> tuple[str, str | None, str | None]:
    """``(base, id, profile_token)``: ``Class.test`` or ``test``, the parametrisation id (``None``
    if not parametrised) and the id part the ``profiles=`` parametrisation added (``None`` if none)."""
    cls = getattr(node, "cls", None)
    base = getattr(node, "originalname", None) or node.name.split("[", 1)[0]
    base = f"{cls.__name__}.{base}" if cls is not None else base
    callspec = getattr(node, "callspec", None)
    if callspec is None:
        return base, None, None
    token = None
    if _PROFILE_PARAM in callspec.params:
        token = callspec.params[_PROFILE_PARAM] or "real"
    return base, callspec.id, token


def default_name(node: Any) -> str:
    """The file name (without ``.yaml``) of ``cassette=True`` for the test ``node`` (module docstring)."""
    base, ident, token = _parts(node)
    if ident is not None and token is not None:
        ident = _swap(ident, token, "")
    if not ident:
        return _safe(base)
    safe = _safe(ident)
    name = f"{_safe(base)}-{safe}" if safe else _safe(base)
    if safe != ident or ident != ident.lower():
        name += "-" + hashlib.sha256(f"{base}[{ident}]".encode()).hexdigest()[:8]
    return name


def legacy_names(node: Any) -> list[str]:
    """The names older mockoss versions gave ``node``'s cassette: ``node.name`` made safe, and for a
    ``profiles=`` test also the ``[real]`` name its recording was written under."""
    names = [_safe(node.name)]
    _, ident, token = _parts(node)
    if ident is not None and token is not None:
        name = getattr(node, "originalname", None) or node.name.split("[", 1)[0]
        names.append(_safe(f"{name}[{_swap(ident, token, 'real')}]"))
    return list(dict.fromkeys(names))


def _lossy(node: Any) -> bool:
    """Whether the parametrisation id in ``node``'s old name lost characters to the file name (then
    another parameter's id may have made the same old name: ``2 + 2`` and ``2 * 2``)."""
    _, ident, token = _parts(node)
    if ident is None:
        return False
    return _UNSAFE.search(ident if token is None else _swap(ident, token, "real")) is not None


def _defined_once(node: Any) -> bool:
    """Whether ``node``'s function name is defined once among its module's test functions and test
    classes (``python_classes`` patterns; inherited methods count), so that its old name, which had
    no class, was no other test's."""
    name = getattr(node, "originalname", None) or node.name.split("[", 1)[0]
    module = getattr(node, "module", None)
    if module is None:
        return False
    patterns = node.config.getini("python_classes") or ["Test"]
    places = 0
    for attribute, value in vars(module).items():
        if inspect.isclass(value):
            if any(fnmatch.fnmatch(attribute, p if any(c in p for c in "*?[") else p + "*") for p in patterns):
                places += callable(getattr(value, name, None))
        elif attribute == name and callable(value):
            places += 1
    return places <= 1


@dataclass(frozen=True)
class Located:
    """Where a test's cassette is.

    Attributes:
        path: the file to replay or record (the new name, or an unambiguous old one that exists).
        new: the file under the new name (the one recorded; equal to ``path`` unless an old file is used).
        legacy: the old-name file in use (``path``), else ``None``; recording anew writes ``new``
            and removes it.
        shared_old: an old-name file that exists but another test may have had (not used), else ``None``.
    """

    path: Path
    new: Path
    legacy: Path | None = None
    shared_old: Path | None = None


def locate(node: pytest.Item, folder: Path) -> Located:
    """Where the ``cassette=True`` cassette of ``node`` is, in ``folder`` (module docstring)."""
    new = folder / f"{default_name(node)}.yaml"
    if new.exists():
        return Located(new, new)
    mine = default_name(node)
    shared_old = None
    for old in legacy_names(node):
        candidate = folder / f"{old}.yaml"
        if old == mine or not candidate.exists():
            continue
        if not _lossy(node) and _defined_once(node):
            return Located(candidate, new, legacy=candidate)
        shared_old = shared_old or candidate
    return Located(new, new, shared_old=shared_old)
