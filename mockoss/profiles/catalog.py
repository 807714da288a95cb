"""What each registered profile serves and which switches it has, for ``mockoss profiles``."""

from __future__ import annotations

import dataclasses
import inspect
import re
import typing
from typing import Any

from mockoss.profiles.registry import PROFILES, switch_names

__all__ = ["describe_profiles", "format_profiles", "switch_docs"]


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


def _first_sentence(text: str, limit: int = 110) -> str:
    match = re.match(r"^(.+?[.;])(\s|$)", text)
    sentence = match.group(1).rstrip(";.") if match else text
    return sentence if len(sentence) <= limit else sentence[: limit - 1].rstrip() + "…"


def describe_profiles() -> list[dict[str, Any]]:
    """One entry per profile: ``name``, ``endpoints``, ``default_model``, ``model_check`` and
    ``switches`` (``name``, ``default``, ``choices`` or ``None`` for free values, ``description``
    from the profile's docstring), in registry order."""
    described = []
    for name, profile in PROFILES.items():
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
        described.append(
            {
                "name": name,
                "endpoints": sorted(profile.endpoints),
                "default_model": profile.default_model,
                "model_check": profile.model_check,
                "switches": switches,
            }
        )
    return described


def _value(value: Any) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def format_profiles(described: list[dict[str, Any]]) -> str:
    """A readable listing: a heading line per profile, then one line per switch."""
    lines: list[str] = []
    for entry in described:
        lines.append(f"{entry['name']}: endpoints {', '.join(entry['endpoints'])}; model {entry['default_model']}")
        for switch in entry["switches"]:
            choices = switch["choices"]
            allowed = f"  ({' | '.join(_value(c) for c in choices)})" if choices else ""
            lines.append(f"  {switch['name']} = {_value(switch['default'])}{allowed}")
            if switch.get("description"):
                lines.append(f"      {_first_sentence(switch['description'])}")
    lines.append(
        "(Values as --switch, X-Mockoss-Switch and scenario files take them, in YAML: null, true, false; "
        "the descriptions, cut here at their first sentence, say None, True, False as Python does. "
        "mockoss profiles --json has them whole.)"
    )
    return "\n".join(lines)
