"""Replies mockoss makes for requests it cannot answer as scripted, free of any web framework:
pydantic validation errors in words, the "model not found" hint, the ``X-Mockoss-Switch`` header's
parse, and the reply for an exception raised while answering (:func:`failure_reply`).

Split out of :mod:`mockoss.server.core`, which calls them.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from typing import Any

import yaml
from pydantic import ValidationError

from mockoss.profiles.base import Profile, Reply
from mockoss.profiles.registry import ProfileError
from mockoss.scenario.yamlsafe import YamlLimitError, load_plain
from mockoss.server.records import Endpoint

__all__ = ["failure_reply"]

logger = logging.getLogger("mockoss")

SWITCH_HEADER = "x-mockoss-switch"
#: The header naming the scenario that answers (``X-Mockoss-Scenario``), lower case as the ASGI
#: layer gives header names.
SCENARIO_HEADER = "x-mockoss-scenario"


def _pydantic_message(error: ValidationError) -> tuple[str, str | None]:
    first = error.errors()[0]
    loc = ".".join(str(p) for p in first["loc"])
    lines = [f"{'.'.join(str(p) for p in e['loc']) or 'body'}: {e['msg']}" for e in error.errors()]
    return "Invalid request: " + "; ".join(lines), (loc or None)


def _for_endpoint(profile: Profile, endpoint: Endpoint) -> Profile:
    """The profile answering ``endpoint``. A profile whose error shapes differ by endpoint (Ollama:
    native ``/api/*`` vs OpenAI-compatible ``/v1/*``) has ``for_endpoint(endpoint)``."""
    scoped = getattr(profile, "for_endpoint", None)
    return profile if scoped is None else scoped(endpoint)  # type: ignore[no-any-return]


def _model_hint(reply: Reply, model: str, served: Sequence[str]) -> Reply:
    """The server's "model not found" reply, with a mockoss hint appended to its message when
    ``model`` is a near miss of a served name (``gpt-oss-20b`` for ``openai/gpt-oss-20b``): how to
    make the server accept it. Other names keep the server's exact text."""
    import dataclasses
    import difflib

    bare = {name.rsplit("/", 1)[-1]: name for name in served}
    close = [bare[model]] if model in bare else difflib.get_close_matches(model, list(served), 1, 0.6)
    if not close or reply.streamed:
        return reply
    hint = (
        f" (mockoss: this server answers to {close[0]!r}; to accept {model!r} too, start it with "
        f"--served-model-name {close[0]} {model}, or MockServer(served_model_names=[...]), "
        "or in pytest @pytest.mark.mockoss(served_model_names=[...]))"
    )
    for key in ("message", "error"):
        for value in _strings(json.loads(reply.body or b"null"), key):
            encoded = json.dumps(value, ensure_ascii=False)[1:-1].encode()
            if encoded and encoded in reply.body:
                addition = json.dumps(hint, ensure_ascii=False)[1:-1].encode()
                body = reply.body.replace(encoded, encoded + addition, 1)
                return dataclasses.replace(reply, body=body)
    return reply


def _strings(data: Any, key: str) -> list[str]:
    """String values under ``key`` anywhere in ``data``, outermost first."""
    if isinstance(data, dict):
        found = [data[key]] if isinstance(data.get(key), str) else []
        return found + [s for v in data.values() for s in _strings(v, key)]
    return []


#: Longest ``X-Mockoss-Switch`` value accepted (characters). A profile has about 40 switches, so
#: 4 KiB holds every one of them; a longer value is compiled under the server lock that every
#: request takes (~45 us an entry, ~140 us an unknown name: 57 ms for 1,000 entries, issue 9,
#: the breaker's D16), so it is a 400 instead.
MAX_SWITCH_HEADER_CHARS = 4096
#: Most ``name=value`` entries accepted in one ``X-Mockoss-Switch`` value (a profile has at most
#: ~40 switches); each is parsed as YAML.
MAX_SWITCH_HEADER_ENTRIES = 64


def _parse_switches(header: str) -> dict[str, Any]:
    """``name=value[,name=value]``, each value plain YAML (no tags, aliases bounded).

    Raises:
        ProfileError: longer than :data:`MAX_SWITCH_HEADER_CHARS` or
            :data:`MAX_SWITCH_HEADER_ENTRIES`, not ``name=value``, a switch given twice (which of
            two values was meant is not ours to guess), not valid YAML, nested past
            PyYAML's composer, a tag, or an alias bomb (a 400).
    """
    if len(header) > MAX_SWITCH_HEADER_CHARS:
        raise ProfileError(
            f"{SWITCH_HEADER}: {len(header)} characters, over mockoss's limit of {MAX_SWITCH_HEADER_CHARS} "
            "(mockoss.server.replies.MAX_SWITCH_HEADER_CHARS; every switch of a profile fits in it)"
        )
    items = [part for part in (part.strip() for part in header.split(",")) if part]
    if len(items) > MAX_SWITCH_HEADER_ENTRIES:  # 1,024 "a=1" fit in 4 KiB: 26 ms of YAML a request
        raise ProfileError(
            f"{SWITCH_HEADER}: {len(items)} entries, over mockoss's limit of {MAX_SWITCH_HEADER_ENTRIES} "
            "(a profile has fewer switches)"
        )
    switches: dict[str, Any] = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep:
            raise ProfileError(f"{SWITCH_HEADER}: expected name=value, got {item!r}")
        if name.strip() in switches:  # a=true,a=false kept the last silently (eleventh-session breaker, finding 9)
            raise ProfileError(f"{SWITCH_HEADER}: switch {name.strip()!r} is given more than once; give each switch once")
        try:
            switches[name.strip()] = load_plain(value)
        except YamlLimitError as exc:
            raise ProfileError(f"{SWITCH_HEADER}: {name.strip()}: {exc}") from None
        except yaml.YAMLError as exc:
            problem = getattr(exc, "problem", None) or type(exc).__name__
            raise ProfileError(f"{SWITCH_HEADER}: {name.strip()}: value {value.strip()!r} is not valid YAML: {problem}") from None
    return switches


def failure_reply(exc: BaseException, profile: Profile, endpoint: Endpoint | None, index: int) -> Reply:
    """The reply for ``exc``, raised while answering request ``index`` (never a bare 500);
    ``endpoint`` ``None``: a side route (``/tokenize``), answered in the profile's own shape.

    * openai-harmony's tokenizer panicking (pyo3's ``PanicException``, not an ``Exception``; e.g.
      a million-character word overflows its pre-tokenizer regex's stack, ``src/tiktoken.rs``,
      ``RuntimeError(StackOverflow)``): a documented 400, not a bug of ours.
    * A lone UTF-16 surrogate in a field the reply echoes, beyond those
      :mod:`mockoss.server.inputs` checks first: a 400 (the step is used).
    * Anything else is a mockoss bug: logged, and a 500 in the profile's error shape that says so.

    ``KeyboardInterrupt``, ``SystemExit`` and ``GeneratorExit`` are the caller's to re-raise.
    """
    scoped = profile if endpoint is None else _for_endpoint(profile, endpoint)
    if type(exc).__name__ == "PanicException":
        message = (
            "mockoss: openai-harmony cannot tokenize this request (its tokenizer panicked: "
            f"{str(exc)[:200]}); a real server would answer it. Shorten the longest word of the prompt."
        )
        return scoped.error(400, message)
    if isinstance(exc, UnicodeEncodeError) and "surrogates not allowed" in str(exc):
        message = (
            "Invalid request: a field the reply echoes holds a lone UTF-16 surrogate (\\ud800-\\udfff "
            "without its pair): not Unicode text (RFC 8259 section 8.2)"
        )
        return scoped.error(400, message)
    logger.exception("mockoss failed to answer request %d", index, exc_info=exc)
    return profile.error(500, f"mockoss internal error (a bug, please report it): {type(exc).__name__}: {exc}")
