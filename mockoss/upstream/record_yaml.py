"""How a recording is written as YAML: exact strings, one-line lists, text UTF-8 cannot encode.

:mod:`mockoss.upstream.record` renders each step with :func:`dump`. Payload strings (a
completion's raw text, replay bodies and frames) are marked by :func:`exact` and written
double-quoted with escapes, so they read back byte for byte; a stream's ``frame_times_ms`` goes
on one line.

Text UTF-8 cannot encode: JSON lets a request hold a lone UTF-16 surrogate (``"a\\ud800b"``
decodes to a Python string holding the code point U+D800, which has no UTF-8 form), and a
recording carries the prompt in the ``note``, the ``match`` pattern and, through a
``{{ request… }}`` template, the completion. libyaml's emitter encodes to UTF-8 before it emits
and raises on it; :func:`dump` then writes that step with PyYAML's pure-Python emitter, which
writes the code point as a double-quoted ``\\u`` escape (``"a\\uD800b"``) that the
scenario loader (PyYAML's ``SafeLoader``) reads back as the very same string. Chosen over
keeping the raw request body as escaped JSON because the step keeps the shape of every other
step (``note``, ``match.last_user`` and ``completion.raw`` mean what they always mean, so the
replayed request matches and answers the same) and the escape loses nothing. A ``#`` comment
has no escapes: :func:`comment` writes such a code point as the text ``\\ud800``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import yaml

__all__ = ["comment", "dump", "exact"]


class _Exact(str):
    """A string written double-quoted with escapes: read back byte for byte."""


class _Flow(list):  # type: ignore[type-arg]
    """A list written on one line (``[2.1, 14.0, …]``): a stream's ``frame_times_ms``."""


class _Dumper(getattr(yaml, "CSafeDumper", yaml.SafeDumper)):  # type: ignore[misc]
    """libyaml's emitter when PyYAML has it (several times faster on long frames), else PyYAML's."""


class _EscapingDumper(yaml.SafeDumper):
    """PyYAML's pure-Python emitter: it writes a code point UTF-8 cannot encode (a lone surrogate)
    as a ``\\uXXXX`` escape in a double-quoted scalar, where libyaml's emitter raises."""


for _dumper in (_Dumper, _EscapingDumper):
    _dumper.add_representer(_Exact, lambda dumper, value: dumper.represent_scalar("tag:yaml.org,2002:str", str(value), style='"'))
    _dumper.add_representer(_Flow, lambda dumper, value: dumper.represent_sequence("tag:yaml.org,2002:seq", value, flow_style=True))

_OPTIONS: dict[str, Any] = {"allow_unicode": True, "sort_keys": False, "width": 1 << 30, "default_flow_style": False}


def dump(data: Any) -> str:
    """``data`` as block YAML, always encodable as UTF-8 (see the module docstring).

    Raises:
        yaml.representer.RepresenterError: a value YAML's safe dumper cannot represent.
    """
    try:
        return yaml.dump(data, Dumper=_Dumper, **_OPTIONS)
    except UnicodeEncodeError:  # a lone surrogate: libyaml encodes before it emits
        return yaml.dump(data, Dumper=_EscapingDumper, **_OPTIONS)


def escape_templates(text: str) -> str:
    """Raw text as a template that renders to itself: each ``{{`` becomes ``{{ "{{" }}``."""
    return text.replace("{{", '{{ "{{" }}')


def comment(text: str) -> str:
    """``text`` fit for a ``#`` comment line: one line, and what UTF-8 cannot encode (a lone
    surrogate) written as ``\\ud800`` text (a comment has no escapes; it is read by eye)."""
    return " ".join(text.encode("utf-8", "backslashreplace").decode("utf-8").split())


def exact(data: Mapping[str, Any]) -> dict[str, Any]:
    """A step mapping with its payload strings (raw text, bodies, frames) marked for exact
    quoting, the raw text's ``{{`` escaped (:func:`escape_templates`) and ``frame_times_ms`` on
    one line."""
    out = dict(data)
    if "completion" in out:
        out["completion"] = {"raw": _Exact(escape_templates(out["completion"]["raw"]))}
    if "replay" in out:
        replay = dict(out["replay"])
        for key in ("body", "body_base64"):
            if key in replay:
                replay[key] = _Exact(replay[key])
        if "frames" in replay:
            replay["frames"] = [_Exact(frame) for frame in replay["frames"]]
        if "frame_times_ms" in replay:
            replay["frame_times_ms"] = _Flow(replay["frame_times_ms"])
        out["replay"] = replay
    return out
