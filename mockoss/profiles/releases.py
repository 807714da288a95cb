"""Every server's timeline by profile name, and profiles built for a release (``vllm@0.26.0``).

The timelines themselves are data in each server's package (``mockoss/profiles/<server>/releases.py``);
see :mod:`mockoss.profiles.timeline` for the model.

Which ``PROFILE@VERSION`` names resolve (:func:`at_release`):

- a listed release (``mockoss profiles --timeline vllm`` lists them): its behaviour;
- a version between two listed releases, numbered like them (``vllm@0.14.0``): accepted, with the
  behaviour of the last change at or before it, i.e. that of the listed release before it
  (``vllm@0.11.1``): every change is placed at a listed release (tests/profiles/test_release_names.py);
- a version newer than the newest listed release (``ollama@9.9.9``): accepted with the newest
  behaviour mockoss knows, and a :class:`ReleaseWarning` that names that release: mockoss cannot
  know what a later release changed;
- a version not numbered like the server's releases (``ollama@0.113`` when Ollama's are ``0.x.y``,
  ``vllm@33``, ``vllm@0.33``): a :class:`ReleaseWarning` with a "did you mean" of the listed release
  it most resembles (``0.11.3``); it still resolves as a version (``0.113`` > ``0.33.0``).
- older than the first listed release, or not a version at all: :class:`~mockoss.profiles.timeline.TimelineError`,
  with a "did you mean" where one is likely (:func:`refused_hint`): the prefix of the server's
  release names left out (``llamacpp@7756`` → ``b7756``), a pre-release without its ``-``
  (``vllm@0.26.0rc1`` → ``0.26.0-rc1``), a leading ``v`` (``vllm@v0.26.0``), or a short version
  older than the timeline (``ollama@0.11`` → ``0.11.1``, the first listed release it begins).

The "did you mean" of a version numbered unlike the releases is, in this order: the listed
release with the same digits (``0.113`` → ``0.11.3``), the one it pads with zeros (``vllm@0.26`` →
``0.26.0``), else the closest by :func:`difflib.get_close_matches` (cutoff 0.5; ``vllm@33`` →
``0.33.0``).
"""

from __future__ import annotations

import dataclasses
import re
import sys
import warnings
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from mockoss.profiles.lazy import LazyMapping

if TYPE_CHECKING:
    from mockoss.profiles.timeline import Timeline

__all__ = ["TIMELINES", "ReleaseWarning", "at_release", "refused_hint", "release_problem", "split_release"]

#: Profile name → its server's timeline (read-only): one line per server, ``"name":
#: "module:TIMELINE"``, imported on first lookup (:class:`mockoss.profiles.lazy.LazyMapping`): a
#: server's timeline module imports its profile package, and a served mockoss needs only its own.
TIMELINES: Mapping[str, Timeline] = LazyMapping({
    "vllm": "mockoss.profiles.vllm.releases:VLLM_TIMELINE",
    "ollama": "mockoss.profiles.ollama.releases:OLLAMA_TIMELINE",
    "llamacpp": "mockoss.profiles.llamacpp.releases:LLAMACPP_TIMELINE",
    "lmstudio": "mockoss.profiles.lmstudio.releases:LMSTUDIO_TIMELINE",
    "gptoss-reference": "mockoss.profiles.gptoss_ref.releases:GPTOSS_REFERENCE_TIMELINE",
    "sglang": "mockoss.profiles.sglang.releases:SGLANG_TIMELINE",
    "mlx-lm": "mockoss.profiles.mlxlm.releases:MLXLM_TIMELINE",
    "trtllm": "mockoss.profiles.trtllm.releases:TRTLLM_TIMELINE",
    "vllm-mlx": "mockoss.profiles.vllm_mlx.releases:VLLM_MLX_TIMELINE",
})  # fmt: skip

P = TypeVar("P")


class ReleaseWarning(UserWarning):
    """``PROFILE@VERSION`` names a version mockoss can only guess the behaviour of: newer than the
    newest release it knows for the server (the newest known behaviour is used), or numbered unlike
    the server's releases (the message has a "did you mean"). See :func:`release_problem`.

    Silence it with ``warnings.filterwarnings("ignore", category=ReleaseWarning)`` or pytest's
    ``filterwarnings = ["ignore::mockoss.profiles.releases.ReleaseWarning"]``.
    """


def split_release(name: str) -> tuple[str, str | None]:
    """``"vllm@0.26.0"`` → ``("vllm", "0.26.0")``; ``"vllm"`` → ``("vllm", None)``."""
    server, sep, release = name.partition("@")
    return (server, release) if sep else (name, None)


def at_release(
    profile: P, release: str, *, name: str | None = None, extra: Mapping[str, Any] | None = None, warn: bool = True
) -> P:
    """``profile`` (the newest release of its server) with the switch values of ``release``.

    Args:
        profile: a registered profile dataclass (its ``name`` is the timeline's server).
        release: a version on that server's timeline: a listed release, or any version from the
            first one on (the behaviour of the last change at or before it; see the module docstring).
        name: the name of the result (default ``"<server>@<release>"``).
        extra: switches set on top (the user's).
        warn: issue a :class:`ReleaseWarning` when :func:`release_problem` finds one (attributed to
            the first caller outside mockoss).

    Warns:
        ReleaseWarning: ``release`` is newer than the newest listed release, or not numbered like
            the listed ones.

    Raises:
        TimelineError: no timeline for the profile, or a release it does not cover.
        TypeError, ValueError: a switch value the profile refuses.
    """
    server = profile.name  # type: ignore[attr-defined]
    timeline = TIMELINES.get(server)
    if timeline is None:
        from mockoss.profiles.timeline import TimelineError  # (the module of timelines: not loaded by a plain serve)

        raise TimelineError(f"profile {server!r} has no timeline; timelines: {', '.join(TIMELINES)}")
    try:
        values = {**timeline.switches_at(release), **(extra or {})}
    except Exception as exc:  # TimelineError (imported on error paths only): add the likely meaning
        message = str(exc)
        if "did you mean" not in message and "; releases: " in message and (meant := refused_hint(timeline, release)):
            raise type(exc)(
                message.replace("; releases: ", f" (did you mean {server}@{meant}?); releases: ", 1)
            ) from None
        raise
    if warn and (problem := release_problem(timeline, release)):
        warnings.warn(problem, ReleaseWarning, stacklevel=_outside_stacklevel())
    return dataclasses.replace(profile, name=name or f"{server}@{release}", **values)  # type: ignore[type-var]


def _digit_runs(release: str) -> list[str]:
    """The runs of digits of a release name before any ``+``/``-`` suffix: ``"0.10.1+gptoss"`` → ``["0", "10", "1"]``."""
    return re.findall(r"\d+", re.split(r"[+-]", release, maxsplit=1)[0])


def release_problem(timeline: Timeline, release: str) -> str | None:
    """Why ``release`` (a version :meth:`Timeline.check_release` accepts) resolves only by guess,
    as one sentence, or ``None`` for a listed release (not renamed) or an unlisted one between
    listed ones.

    * a listed release that earlier mockoss releases used as the name of another
      (:attr:`Timeline.renamed`): which release to pin for the behaviour it had;
    * newer than the newest listed release: ``"ollama@9.9.9 is newer than 0.33.0-rc2, the newest
      ollama release mockoss knows: the behaviour of ollama@0.33.0-rc2 is used"``;
    * a count of numbers that no listed release has (``0.113`` against Ollama's ``0.x.y``): the
      listed release it most resembles (the same digits, else :func:`difflib.get_close_matches`,
      cutoff 0.5) as a "did you mean", and the listed release whose behaviour it gets.
    """
    from mockoss.profiles.timeline import release_key  # (the timeline model: loaded by then, at_release used it)

    ordered = timeline.ordered_releases
    names = [r.name for r in ordered]
    if release in names:
        if (meant := timeline.renamed.get(release)) is not None:
            server = timeline.server
            return (
                f"{server}@{release} named {server}@{meant} in earlier mockoss releases; it now means build "
                f"{release} itself, whose behaviour differs: pin {server}@{meant} for the behaviour it had "
                f"(`mockoss profiles --timeline {server}` lists the changes)"
            )
        return None
    key = release_key(release)
    floor = [n for n in names if release_key(n) <= key][-1]  # check_release refused anything older than the first
    server = timeline.server
    runs = _digit_runs(release)
    if len(runs) not in {len(_digit_runs(n)) for n in names}:
        import difflib  # error paths only

        same = [n for n in names if "".join(_digit_runs(n)) == "".join(runs)]  # a dot missing: 0.113 → 0.11.3
        padded = [
            n for n in names if _digit_runs(n)[: len(runs)] == runs and set(_digit_runs(n)[len(runs) :]) == {"0"}
        ]  # 0.11 → 0.11.0
        near = same or padded or difflib.get_close_matches(release, names, 1, 0.5)
        hint = f" (did you mean {server}@{near[0]}?)" if near else ""
        shapes = " or ".join(sorted({".".join("N" * len(_digit_runs(n))) for n in names}, key=len))
        return (
            f"{server}@{release}: {release!r} is not numbered like {server}'s releases ({shapes}){hint}; "
            f"read as a version it gets the behaviour of {server}@{floor}; releases: {', '.join(names)}"
        )
    if key > release_key(names[-1]):
        return (
            f"{server}@{release} is newer than {names[-1]}, the newest {server} release mockoss knows: "
            f"the behaviour of {server}@{names[-1]} is used (mockoss cannot know what later releases changed)"
        )
    return None


def refused_hint(timeline: Timeline, release: str) -> str | None:
    """The release a name :meth:`Timeline.check_release` refuses most likely meant, or ``None``:
    the name with the prefix of the server's release names (``7756`` → ``b7756`` for llama.cpp's
    ``bNNNN`` tags, ggml-org/llama.cpp's releases page) or with a ``-`` before a pre-release
    (``0.26.0rc1`` → ``0.26.0-rc1``: vLLM tags ``v0.26.0rc1``, PEP 440) when the timeline accepts
    it; else, for a version older than the timeline, the first listed release that begins with its
    numbers (``0.11`` → ``0.11.1``)."""
    from mockoss.profiles.timeline import TimelineError

    names = [r.name for r in timeline.ordered_releases]
    prefix = re.match(r"[A-Za-z]*", names[0]).group()  # type: ignore[union-attr]
    candidates = [prefix + release] if prefix and not release.startswith(prefix) else []
    dashed = re.sub(r"^([A-Za-z]*[0-9]+(?:\.[0-9]+)*)\.?([A-Za-z])", r"\1-\2", release)
    candidates += [dashed] if dashed != release else []
    for candidate in candidates:
        try:
            return timeline.check_release(candidate)
        except TimelineError:
            continue
    runs = _digit_runs(release)
    begun = [n for n in names if runs and _digit_runs(n)[: len(runs)] == runs]
    return begun[0] if begun and release not in names else None


def _outside_stacklevel() -> int:
    """The ``stacklevel`` for :func:`warnings.warn` called from :func:`at_release` that names the
    first frame outside the mockoss package (the user's ``MockServer(profile=...)`` line), judged
    by the frame's module (a dataclass's generated ``__init__`` has no file of its own);
    ``warnings.warn(skip_file_prefixes=...)`` does this by file from Python 3.12 on."""
    frame = sys._getframe(2)  # the caller of at_release
    level = 2
    while frame is not None and str(frame.f_globals.get("__name__", "")).partition(".")[0] == "mockoss":
        frame = frame.f_back
        level += 1
    return level
