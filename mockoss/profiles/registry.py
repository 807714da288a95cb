"""Name-keyed registry of server profiles."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from mockoss.profiles.base import Profile
from mockoss.profiles.llamacpp import LlamacppProfile
from mockoss.profiles.lmstudio import LmstudioProfile
from mockoss.profiles.ollama import OllamaProfile
from mockoss.profiles.openai import OpenAIProfile
from mockoss.profiles.vllm import VllmProfile
from mockoss.profiles.vllm.variants import VLLM_VARIANTS

__all__ = ["PROFILES", "ProfileError", "get_profile"]

#: Read-only view of the shipped profiles by name.
PROFILES: Mapping[str, Profile] = MappingProxyType({"vllm": VllmProfile(), **VLLM_VARIANTS, "llamacpp": LlamacppProfile(), "lmstudio": LmstudioProfile(), "ollama": OllamaProfile(), "openai": OpenAIProfile()})


class ProfileError(ValueError):
    """Unknown profile name, or a switch the profile does not have (the message lists the valid ones)."""


#: Dataclass fields of a profile that describe it rather than switch a behaviour.
_IDENTITY_FIELDS = frozenset({"name", "endpoints"})


def switch_names(profile: Profile) -> list[str]:
    """The switches a profile accepts (its dataclass fields, less ``name`` and ``endpoints``)."""
    return [f.name for f in dataclasses.fields(profile) if f.name not in _IDENTITY_FIELDS]  # type: ignore[arg-type]


def get_profile(name: str, switches: Mapping[str, Any] | None = None) -> Profile:
    """Return the profile ``name`` with ``switches`` applied.

    Raises:
        ProfileError: unknown name or switch; the message lists what is valid.
    """
    try:
        profile = PROFILES[name]
    except KeyError:
        raise ProfileError(f"unknown profile {name!r}; profiles: {', '.join(PROFILES)}") from None
    if not switches:
        return profile
    unknown = sorted(set(switches) - set(switch_names(profile)))
    if unknown:
        raise ProfileError(
            f"profile {name!r} has no switch {', '.join(map(repr, unknown))}; "
            + (f"switches: {', '.join(switch_names(profile))}" if switch_names(profile) else "it has no switches")
        )
    try:
        return dataclasses.replace(profile, **switches)  # type: ignore[type-var]
    except (TypeError, ValueError) as exc:
        raise ProfileError(f"profile {name!r}: {exc}") from None
