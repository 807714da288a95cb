"""A chat request's prompt as SGLang 0.5.23 renders it for gpt-oss: the model's own chat template.

SGLang counts a chat prompt by rendering the model's ``chat_template.jinja`` through transformers'
``apply_chat_template`` (sgl-project/sglang v0.5.23, ``python/sglang/srt/entrypoints/openai/
serving_chat.py:2259 _render_and_encode_chat_template``) and encoding the text with the model's
tokenizer, not with the Harmony renderer vLLM uses. Here the same template is rendered with jinja2
as transformers renders it (transformers 5.19.0 ``utils/chat_template_utils.py``:
``_cached_compile_jinja_template``: an ``ImmutableSandboxedEnvironment`` with ``trim_blocks``,
``lstrip_blocks`` and the ``loopcontrols`` extension, the ``tojson`` filter replaced by
``json.dumps(x, ensure_ascii=False, ...)``, the globals ``raise_exception`` (a ``TemplateError``)
and ``strftime_now``; ``render_jinja_template``: ``render(messages=, tools=, documents=None,
add_generation_prompt=, **kwargs)``), with the input :mod:`.template_input` builds as SGLang does.
The text is then counted as o200k_harmony with every special token allowed (what the model's
tokenizer does with its added tokens): one token per special-token string, and each text between
two of them BPE-encoded on its own (:func:`mockoss.harmony.prompt.bpe.text_tokens`).

Errors, as ``_apply_jinja_template`` (``serving_chat.py:2194-2227``) answers them: a first render
that raises anything is retried with each tool flattened to its ``function`` object; a
``jinja2.TemplateError`` or ``TypeError`` of the retry is SGLang's 400 ``BadRequest`` with the
error's text (:class:`Refusal`). So a tool without a description (``"// " + None``: a
``TypeError``) is refused with the retry's ``'dict object' has no attribute 'function'``, and
a template ``raise_exception`` (a ``tool`` message with no assistant tool call before it, an
assistant ``content`` holding ``<|channel|>analysis<|message|>``) with its message, or with the
retry's when the request has tools.

``strftime_now`` gives a fixed date (:data:`TEMPLATE_DATE`): the template writes only
``%Y-%m-%d``, whose count is the same for every date of a four-digit year (the digits are
split in runs of at most three: ``tests/profiles/sglang/test_sglang_chat_template_count.py``
checks it), so a count does not depend on the day it is made.

The template file (:data:`TEMPLATE_FILE`, package data) is openai/gpt-oss-20b's
``chat_template.jinja`` on Hugging Face (commit "Updated chat template (#82)", 2025-08-07),
byte for byte (sha256 :data:`TEMPLATE_SHA256`), licensed Apache-2.0 by OpenAI as the model is:
the template ``tests/golden/sglang-0.5.23`` was recorded with (its header's ``chat_template``).

Cost: the whole render is quadratic in a tool-using conversation (the template scans the later
messages at every tool call: 400 messages 115 ms, 800 353 ms, measured), so the count is summed
from parts cached by content, each rendered by the same template on one or two messages
(:mod:`.template_pieces`, which says why the sum is exact; a new plain message is counted from
the template's skeleton without a render, :mod:`.template_skeleton`; the leading messages' sum is
found again whole, :mod:`.template_prefix`): a resent conversation costs its new messages. What the parts cannot give (an error to word, a ``chat_template_kwargs`` key the template reads
other than the head's: :func:`template_variables`; one it never reads is left out) is rendered
whole (:func:`render_prompt`). The count of a body sent before is also kept under its bytes when
the caller has them (:func:`template_count`).
"""

from __future__ import annotations

import functools
import json
import re
from contextvars import ContextVar
from datetime import datetime
from pathlib import Path
from typing import Any

__all__ = [
    "ELSEWHERE_CHARS",
    "TEMPLATE_DATE",
    "TEMPLATE_FILE",
    "TEMPLATE_SHA256",
    "Refusal",
    "render_prompt",
    "template_count",
    "template_variables",
    "text_count",
]

TEMPLATE_FILE = Path(__file__).with_name("gpt_oss_chat_template.jinja")
TEMPLATE_SHA256 = "a4c9919cbbd4acdd51ccffe22da049264b1b73e59055fa58811a99efbd7c8146"
#: What ``strftime_now`` formats (see the module docstring: any such date counts the same).
TEMPLATE_DATE = datetime(2026, 1, 1)
#: The whole-body count cache's kind (:func:`mockoss.endpoints.body_count`).
_KIND = "sglang.chat.template"
#: A text of this many characters or more is encoded by
#: :data:`mockoss.harmony.encoding.ENCODE_ELSEWHERE` when it is set (:func:`text_count`).
ELSEWHERE_CHARS = 4096
#: Candidate special-token strings; those in the encoding's set count as one token each.
_SPECIAL = re.compile(r"<\|[a-z0-9_]+\|>")


class Refusal(Exception):
    """SGLang's 400 for a chat request whose prompt it cannot render: ``message`` is the error's
    text (``type: "BadRequest"``, ``serving_base.py:123``)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


@functools.cache
def _template() -> Any:
    """The compiled template, in an environment built as transformers builds it (module docstring)."""
    import jinja2
    import jinja2.ext
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    def raise_exception(message: str) -> None:
        raise jinja2.exceptions.TemplateError(message)

    def tojson(
        x: Any, ensure_ascii: bool = False, indent: Any = None, separators: Any = None, sort_keys: bool = False
    ) -> str:
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)

    def strftime_now(format: str) -> str:
        return TEMPLATE_DATE.strftime(format)

    environment = ImmutableSandboxedEnvironment(
        trim_blocks=True, lstrip_blocks=True, extensions=[jinja2.ext.loopcontrols]
    )
    environment.filters["tojson"] = tojson
    environment.globals["raise_exception"] = raise_exception
    environment.globals["strftime_now"] = strftime_now
    return environment.from_string(TEMPLATE_FILE.read_text(encoding="utf-8"))


@functools.cache
def template_variables() -> frozenset[str]:
    """The names the template reads from its render context (``jinja2.meta.find_undeclared_variables``
    of its source: ``messages``, ``tools``, the head's variables, the globals ``raise_exception``
    and ``strftime_now``, …). A ``chat_template_kwargs`` key outside them renders nothing, so the
    count is summed without it; one inside them (other than the head's) is rendered whole. The
    environment's globals are added (``find_undeclared_variables`` leaves them out): a kwarg of
    such a name (``raise_exception``, ``namespace``) shadows the global where the template reads it."""
    import jinja2.meta

    environment = _template().environment
    source = environment.parse(TEMPLATE_FILE.read_text(encoding="utf-8"))
    return frozenset(jinja2.meta.find_undeclared_variables(source)) | frozenset(environment.globals)


#: The template's call of its system-message macro, left out of :func:`_loop_template`.
_SYSTEM_CALL = "{{- build_system_message() }}"


@functools.cache
def _loop_template() -> Any:
    """The same template without its system message's text (the call :data:`_SYSTEM_CALL`,
    whose macro only writes text: its ``set`` statements are local to it), for the pieces of
    :mod:`.template_pieces`, which subtract two renders sharing that text."""
    source = TEMPLATE_FILE.read_text(encoding="utf-8")
    if source.count(_SYSTEM_CALL) != 1:
        raise RuntimeError(f"{TEMPLATE_FILE.name}: expected one {_SYSTEM_CALL!r}")
    return _template().environment.from_string(source.replace(_SYSTEM_CALL, ""))


def _render_text(
    messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None, kwargs: dict[str, Any], *, whole: bool = True
) -> str:
    """The template rendered as transformers' ``render_jinja_template`` renders it:
    ``render(messages=, tools=, documents=None, add_generation_prompt=True, **kwargs)`` (a kwarg
    of those names is overridden here, where transformers raises a ``TypeError``: not reproduced).
    ``whole=False``: :func:`_loop_template`'s render."""
    variables = {**kwargs, "messages": messages, "tools": tools, "documents": None, "add_generation_prompt": True}
    return (_template() if whole else _loop_template()).render(variables)  # type: ignore[no-any-return]


def _plain_render(messages: list[dict[str, Any]]) -> str:
    """:func:`_loop_template` rendered on ``messages`` with no tools and no variables (the
    pieces' renders, :mod:`.template_skeleton`)."""
    return _loop_template().render(  # type: ignore[no-any-return]
        {"messages": messages, "tools": None, "documents": None, "add_generation_prompt": True}
    )


def render_prompt(body: dict[str, Any]) -> tuple[str, str | None]:
    """``(rendered prompt text, assistant prefix or None)`` for the chat request ``body``, as
    SGLang 0.5.23 renders it with the gpt-oss chat template (module docstring): the whole
    conversation at once.

    Raises:
        Refusal: SGLang's 400 (the template's error, or :class:`.template_input.TemplateInputError`).
        Exception: anything else the retried render raises (SGLang has no 400 for it).
    """
    import jinja2

    from mockoss.profiles.sglang.template_input import TemplateInputError, template_input

    try:
        given = template_input(body)
    except TemplateInputError as exc:
        raise Refusal(str(exc)) from None
    try:
        return _render_text(given.messages, given.tools, given.kwargs), given.assistant_prefix
    except Exception:  # noqa: BLE001  (SGLang retries on any error: serving_chat.py:2206)
        flat = [tool.get("function", tool) for tool in given.tools] if given.tools else None
        try:
            return _render_text(given.messages, flat, given.kwargs), given.assistant_prefix
        except (jinja2.TemplateError, TypeError) as exc:
            raise Refusal(str(exc)) from None


@functools.cache
def _specials() -> frozenset[str]:
    from mockoss.harmony.encoding import load_encoding

    return frozenset(load_encoding().special_tokens_set)


def text_count(text: str) -> int:
    """o200k_harmony tokens of ``text`` with every special token allowed (``encode(text,
    allowed_special="all")``): each special-token string one token, the texts between them
    encoded on their own (as tiktoken and the tokenizer's added tokens cut them).

    A text of :data:`ELSEWHERE_CHARS` characters or more is encoded whole by
    :func:`mockoss.harmony.encoding.encode_text` when :data:`~mockoss.harmony.encoding.ENCODE_ELSEWHERE`
    is set (the HTTP layer's prompt worker process, for a big request or one with a long
    unbroken run of text, counted before the server lock: :mod:`mockoss.server.prelock`): the
    BPE is quadratic in a word's length (one 30,000-character word ~0.7-1.8 s here), and the
    surface counted it again in process under the server lock, every other client waiting
    0.4-0.6 s (t18 fuzz F5; the surface now finds that count, :func:`template_count`). The same
    count: ``encode(text, allowed_special="all")``.

    Raises:
        UnicodeEncodeError: a lone surrogate in ``text`` (or what the library's encode raises
            for it, a ``ValueError`` too, when encoded elsewhere).
    """
    from mockoss.harmony.encoding import ENCODE_ELSEWHERE, encode_text
    from mockoss.harmony.prompt.bpe import text_tokens

    if len(text) >= ELSEWHERE_CHARS and ENCODE_ELSEWHERE.get() is not None:
        return len(encode_text(text, special=True))

    specials = _specials()
    count, start = 0, 0
    for match in _SPECIAL.finditer(text):
        if match.group() in specials:
            count += text_tokens(text[start : match.start()]) + 1
            start = match.end()
    return count + text_tokens(text[start:])


def _render_count(body: dict[str, Any]) -> int:
    """The count of ``body``'s prompt: summed from cached parts (:mod:`.template_pieces`), else
    from the whole render (:func:`render_prompt`, which also words a refusal)."""
    from mockoss.profiles.sglang import template_input as given
    from mockoss.profiles.sglang.template_pieces import NotSummable, summed_count

    ids = given.prompt_ids(body)
    if ids is not None:
        return len(ids)
    messages = [m for m in body.get("messages") or () if isinstance(m, dict)]
    entries = [(m, False) for m in messages]
    read = template_variables()  # a kwarg the template never reads renders nothing: left out (t18 fuzz F7)
    variables = {name: value for name, value in given.template_kwargs(body).items() if name in read}
    prefix = None
    try:
        if messages and given.message_shape(messages[-1])[0] == "assistant":  # _handle_last_assistant_message
            text = given.process_message(messages[-1])["content"]
            if body.get("continue_final_message"):
                prefix = text
                entries.pop()
            else:
                entries[-1] = ({"role": "user", "content": text}, True)
        head_key = (body.get("tools"), body.get("tool_choice"))
        count = summed_count(
            entries,
            head_key,
            lambda: given.template_tools(body),
            variables,
            lambda messages, tools, variables, whole: text_count(_render_text(messages, tools, variables, whole=whole)),
            _plain_render,
            text_count,
        )
    except (NotSummable, given.TemplateInputError):  # the whole render, in SGLang's order, words the error
        count = text_count(render_prompt(body)[0])
    return count + (text_count(prefix) if prefix else 0)


#: The last body counted and its outcome (a count or a :class:`Refusal`), so that the refusal
#: check and the count of one request render once. Held by identity (the body is kept alive
#: with it); a parsed body is never modified (``mockoss.endpoints.prompt_tokens``). A context
#: variable, not a global: a big request counted before the server lock (in the worker process,
#: :func:`text_count`) is found again by its surface under the lock on the same thread, where
#: a global was overwritten by the small requests answered meanwhile, and the prompt encoded
#: again in process (t18 fuzz F5).
_LAST: ContextVar[tuple[Any, int | Refusal]] = ContextVar("mockoss_sglang_template_last", default=(None, 0))


def _outcome(body: dict[str, Any]) -> int:
    try:
        result: int | Refusal = _render_count(body)
    except Refusal as refusal:
        result = refusal
    _LAST.set((body, result))
    if isinstance(result, Refusal):
        raise result
    return result


def template_count(body: dict[str, Any], raw: bytes = b"") -> int:
    """The prompt's token count as SGLang 0.5.23 renders and encodes it for gpt-oss (its
    ``usage.prompt_tokens``): the rendered template's tokens, plus the assistant prefix's under
    ``continue_final_message``; ``len(input_ids)`` when the request gives them.

    The outcome of the last body is kept by identity (the refusal check and the count of one
    request render once); with ``raw``, the body's bytes, a count is also kept in the whole-body
    cache (:func:`mockoss.endpoints.body_count`: same byte budget, admission and reset), so a body
    sent before costs a lookup. A refused body is never cached.

    Raises:
        Refusal: SGLang's 400 for this request (module docstring).
        Exception: a render error SGLang does not answer as a 400, or a lone surrogate
            (``UnicodeEncodeError``).
    """
    last_body, last = _LAST.get()
    if last_body is body:
        if isinstance(last, Refusal):
            raise Refusal(last.message)
        return last
    if not raw:
        return _outcome(body)
    from mockoss.endpoints import body_count

    return body_count(_KIND, raw, lambda: _outcome(body))
