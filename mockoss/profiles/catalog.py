"""What each registered profile serves and which switches it has, for ``mockoss profiles``."""

from __future__ import annotations

import dataclasses
import typing
from typing import Any

from mockoss.profiles.registry import PROFILES, switch_names

__all__ = ["describe_profiles", "format_profiles"]


def _choices(annotation: Any) -> list[Any] | None:
    """The values a switch accepts when its annotation says (``Literal[...]`` or ``bool``)."""
    if annotation is bool or annotation == "bool":
        return [True, False]
    if typing.get_origin(annotation) is typing.Literal:
        return list(typing.get_args(annotation))
    return None


def describe_profiles() -> list[dict[str, Any]]:
    """One entry per profile: ``name``, ``endpoints``, ``default_model``, ``model_check`` and
    ``switches`` (``name``, ``default``, ``choices`` or ``None`` for free values), in registry order."""
    described = []
    for name, profile in PROFILES.items():
        hints = typing.get_type_hints(type(profile))
        fields = {f.name: f for f in dataclasses.fields(profile)}  # type: ignore[arg-type]
        switches = [
            {"name": s, "default": getattr(profile, s), "choices": _choices(hints.get(s, fields[s].type))}
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
    return "\n".join(lines)
