"""What each registered profile serves and which switches it has, for ``mockoss profiles``.

``mockoss profiles`` lists each profile with the names of its switches (:func:`format_profiles`);
``mockoss profiles NAME[@RELEASE]`` one profile's switches with their defaults, values and whole
descriptions, wrapped to the terminal (:func:`format_profile`). Until the eighteenth session the
listing held every switch of every profile, each description cut at ~110 characters: 382 lines
for 12 profiles, and the whole text only in ``--json`` (the newcomer's item 6).
"""

from __future__ import annotations

import dataclasses
import inspect
import re
import typing
from typing import TYPE_CHECKING, Any

from mockoss.profiles.registry import PROFILES, switch_names

if TYPE_CHECKING:
    from mockoss.profiles.base import Profile

__all__ = ["describe_profile", "describe_profiles", "format_profile", "format_profiles", "switch_docs"]


def _choices(annotation: Any) -> list[Any] | None:
    """The values a switch accepts when its annotation says (``Literal[...]`` or ``bool``)."""
    if annotation is bool or annotation == "bool":
        return [True, False]
    if typing.get_origin(annotation) is typing.Literal:
        return list(typing.get_args(annotation))
    return None


def switch_docs(cls: type) -> dict[str, str]:
    """Each switch's description from the ``Attributes:`` section of the profile class docstring,
    joined into one line (``name: text`` lines, continuation lines indented deeper)."""
    doc = inspect.cleandoc(cls.__doc__ or "")
    docs: dict[str, list[str]] = {}
    current: list[str] | None = None
    inside = False
    for line in doc.splitlines():
        if line.strip() == "Attributes:":
            inside = True
            continue
        if not inside:
            continue
        if line and not line.startswith(" "):  # the next section
            break
        head = re.match(r"^    (\w+): ?(.*)$", line)
        if head:
            current = docs.setdefault(head.group(1), [])
            current.append(head.group(2).strip())
        elif current is not None and line.strip():
            current.append(line.strip())
    return {name: " ".join(parts) for name, parts in docs.items()}


def describe_profiles() -> list[dict[str, Any]]:
    """One entry per profile (:func:`describe_profile`), in registry order (``mockoss profiles --json``)."""
    return [describe_profile(name, profile) for name, profile in PROFILES.items()]


def describe_profile(name: str, profile: Profile) -> dict[str, Any]:
    """``profile`` as ``mockoss profiles --json`` lists it: ``name``, ``endpoints`` (sorted),
    ``default_model``, ``model_check`` and ``switches``, each a dict of ``name``, ``default`` (the
    profile's value: a release's for ``vllm@0.26.0``), ``choices`` (a list, or ``None`` for free
    values) and ``description`` (from the profile class's docstring, one line)."""
    hints = typing.get_type_hints(type(profile))
    fields = {f.name: f for f in dataclasses.fields(profile)}  # type: ignore[arg-type]
    docs = switch_docs(type(profile))
    switches = [
        {
            "name": s,
            "default": getattr(profile, s),
            "choices": _choices(hints.get(s, fields[s].type)),
            "description": docs.get(s, ""),
        }
        for s in switch_names(profile)
    ]
    return {
        "name": name,
        "endpoints": sorted(profile.endpoints),
        "default_model": profile.default_model,
        "model_check": profile.model_check,
        "switches": switches,
    }


def _value(value: Any) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def _heading(entry: dict[str, Any]) -> str:
    return f"{entry['name']}: endpoints {', '.join(entry['endpoints'])}; model {entry['default_model']}"


def _width(width: int | None) -> int:
    """``width``, or the terminal's (``$COLUMNS``, else the terminal of standard output, else 80:
    :func:`shutil.get_terminal_size`), never below 40 columns."""
    import shutil

    return max(40, width or shutil.get_terminal_size().columns)


def _fill(text: str, width: int, indent: str) -> str:
    import textwrap

    # Code spans and URLs stay whole on their line, as the docstrings wrote them.
    return textwrap.fill(
        text, width, initial_indent=indent, subsequent_indent=indent, break_long_words=False, break_on_hyphens=False
    )


def format_profiles(described: list[dict[str, Any]], width: int | None = None) -> str:
    """The overview ``mockoss profiles`` prints: per profile a heading (name, endpoints, default
    model) and the names of its switches, wrapped to ``width`` columns (``None``: the terminal's);
    then how to see one profile in full."""
    width = _width(width)
    lines: list[str] = []
    for entry in described:
        lines.append(_heading(entry))
        names = ", ".join(switch["name"] for switch in entry["switches"]) or "none"
        lines.append(_fill(f"{len(entry['switches'])} switches: {names}", width, "  "))
    lines.append(
        _fill(
            "mockoss profiles NAME prints a profile's switches with their defaults, values and whole "
            "descriptions (NAME@RELEASE: a release's defaults, e.g. vllm@0.26.0); --json all of them; "
            "--timeline NAME a server's releases.",
            width,
            "",
        )
    )
    return "\n".join(lines)


def format_profile(entry: dict[str, Any], width: int | None = None) -> str:
    """``mockoss profiles NAME``: ``entry`` (:func:`describe_profile`) as a heading, then per switch
    ``  name = default  (choice | choice)`` and its whole description, wrapped to ``width`` columns
    (``None``: the terminal's) and indented six spaces."""
    width = _width(width)
    lines = [_heading(entry)]
    for switch in entry["switches"]:
        choices = switch["choices"]
        allowed = f"  ({' | '.join(_value(c) for c in choices)})" if choices else ""
        lines.append(f"  {switch['name']} = {_value(switch['default'])}{allowed}")
        if switch.get("description"):
            lines.append(_fill(switch["description"], width, "      "))
    lines.append(
        _fill(
            "(Values as --switch, X-Mockoss-Switch and scenario files take them, in YAML: null, true, false; "
            "the descriptions say None, True, False as Python does.)",
            width,
            "",
        )
    )
    return "\n".join(lines)
