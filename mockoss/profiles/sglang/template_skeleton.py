"""A plain message's piece of the gpt-oss chat template counted without rendering it.

:mod:`.template_pieces` counts a message's piece as ``render(context + [message]) -
render(context)`` (both renders of the loop template, :func:`.template._loop_template`): a jinja2
render of the whole template (~50-100 us) for every new message. For the three kinds of message
an agent sends most, the piece is the message's text between two fixed strings, as the template
writes them (openai/gpt-oss-20b ``chat_template.jinja``, the loop's branches):

* ``user``: ``"<|start|>user<|message|>" + message.content + "<|end|>"``;
* ``assistant`` without ``tool_calls`` (and not the last message of a render without generation
  prompt, which SGLang never asks for): ``"<|start|>assistant<|channel|>final<|message|>" +
  message.content + "<|end|>"``, unless the content holds ``<|channel|>analysis<|message|>`` or
  ``<|channel|>final<|message|>`` (the template's ``raise_exception``: rendered, as before);
* ``tool`` after a call to ``NAME``: ``"<|start|>functions." + NAME + " to=assistant<|channel|>
  commentary<|message|>" + message.content|tojson + "<|end|>"``.

Here those strings are not written by hand: :func:`skeleton` renders the template on a message
with a sentinel content (twice, two sentinels) and takes the text around it, ``(A, B)``, checking
that the sentinel appears once, that both renders give the same ``A`` and ``B``, that ``A`` ends
with a special token and ``B`` begins with one. Then a content ``c`` renders as ``A + f(c) + B``
(``f`` the identity, or ``json.dumps(c, ensure_ascii=False)``, the template's ``tojson`` as
transformers overrides it, for ``tool``), and its count is ``count(A) + count(f(c)) + count(B)``:
:func:`.template.text_count` cuts the text at special-token strings, and no such string can
straddle ``A``'s last or ``B``'s first (the pattern ``<|[a-z0-9_]+|>`` holds no ``<`` or ``|``
inside), so the text between them is cut and counted exactly as ``f(c)`` alone. The piece is
``count(A) + count(B) - count(render(context))`` plus ``count(f(c))``: one cached constant per
kind (and tool name) plus the content's own count.
``tests/profiles/sglang/test_sglang_template_skeleton.py`` compares it with the renders on
contents full of special-token strings, partial markers and non-ASCII text.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable
from typing import Any

__all__ = ["piece_count", "skeleton"]

#: Two contents no template branch reads (no special-token string, no channel marker).
_SENTINELS = ("\x01mockoss sentinel one\x01", "mockoss sentinel two")
_EMPTY: dict[str, Any] = {"role": "", "content": ""}
_SPECIAL_END = re.compile(r"<\|[a-z0-9_]+\|>\Z")
_SPECIAL_START = re.compile(r"<\|[a-z0-9_]+\|>")
_MARKERS = ("<|channel|>analysis<|message|>", "<|channel|>final<|message|>")
#: Derived constants by ``(kind, tool name)``: ``None`` when the render did not have the shape.
_constants: dict[tuple[str, Any], int | None] = {}
_MAX_CONSTANTS = 4096  # tool names come from requests: emptied when full


def _call_to(name: str) -> dict[str, Any]:
    return {"role": "assistant", "content": "", "tool_calls": [{"function": {"name": name, "arguments": {}}}]}


def _content_text(kind: str, content: str) -> str:
    return json.dumps(content, ensure_ascii=False) if kind == "tool" else content


def skeleton(
    kind: str, name: Any, render: Callable[[list[dict[str, Any]]], str], count: Callable[[str], int]
) -> int | None:
    """The constant part of a ``kind`` message's piece (``"user"``, ``"assistant"``, ``"tool"``
    after a call to ``name``): ``count(A) + count(B) - count(context)`` (module docstring), or
    ``None`` when the template's render does not have that shape. ``render(messages)`` renders
    the loop template with no tools and no variables; ``count`` is :func:`.template.text_count`.
    Derived once per kind and name."""
    key = (kind, name if kind == "tool" else None)
    if key in _constants:
        return _constants[key]
    before = [_EMPTY, _call_to(name)] if kind == "tool" else [_EMPTY]
    found: int | None = None
    try:
        context = render(before)
        around = set()
        for sentinel in _SENTINELS:
            text = render([*before, {"role": kind, "content": sentinel}])
            inserted = _content_text(kind, sentinel)
            if text.count(inserted) != 1:
                around = set()
                break
            around.add(tuple(text.split(inserted)))
        if len(around) == 1:
            a, b = next(iter(around))
            specials = _specials()
            end, start = _SPECIAL_END.search(a), _SPECIAL_START.match(b)
            if end is not None and start is not None and end.group() in specials and start.group() in specials:
                found = count(a) + count(b) - count(context)
    except Exception:  # noqa: BLE001  (no shape: the caller renders)
        found = None
    if len(_constants) >= _MAX_CONSTANTS:
        _constants.clear()
    _constants[key] = found
    return found


@functools.cache
def _specials() -> frozenset[str]:
    """o200k_harmony's special-token strings (as :func:`.template.text_count` reads them)."""
    from mockoss.harmony.encoding import load_encoding

    return frozenset(load_encoding().special_tokens_set)


def piece_count(
    message: dict[str, Any],
    name: Any,
    render: Callable[[list[dict[str, Any]]], str],
    count: Callable[[str], int],
) -> int | None:
    """The piece count of a processed message (:func:`.template_input.process_message`) without a
    render, or ``None`` when it needs one: not a ``user``, plain ``assistant`` or ``tool`` message
    (after a call to the string ``name``) with a string content, an assistant content holding a
    channel marker, or a template without that shape.

    Raises:
        UnicodeEncodeError: a lone surrogate in the content (``count``'s).
    """
    kind = message.get("role")
    content = message.get("content")
    if type(content) is not str or "tool_calls" in message or len(message) != 2:
        return None
    if kind == "assistant":
        if _MARKERS[0] in content or _MARKERS[1] in content:
            return None
    elif kind == "tool":
        if type(name) is not str:
            return None
    elif kind != "user":
        return None
    constant = skeleton(kind, name, render, count)
    if constant is None:
        return None
    return constant + count(_content_text(kind, content))
