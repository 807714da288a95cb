"""Templates in scripted text: generated content and request echo, parsed here, never evaluated.

A message's ``content`` or a completion's ``raw`` text may hold ``{{ EXPRESSION [| FILTER]… }}``:

``{{ faker.city }}``, ``{{ faker.pyint(min_value=1, max_value=9) }}``
    A value from `Faker <https://faker.readthedocs.io>`_ (locale ``en_US``). Only the providers in
    :data:`FAKER_PROVIDERS` are allowed, with keyword arguments that are literals (string, number,
    ``true``/``false``) within the listed bounds; providers that read the clock are left out.
``{{ request.model }}``, ``{{ request.messages[-1].content }}``, ``{{ request['input'] }}``
    A value from the request body: ``.name`` and ``[index]`` / ``["key"]`` steps only.
    ``request.model`` is the resolved model name, also when the body has none.
``{{ "text" }}``
    A string literal, e.g. ``{{ "{{" }}`` for literal braces.

Filters: ``| json`` writes the value as a JSON literal (a string gets quotes and escapes, for
use inside JSON arguments); ``| default("x")`` replaces a missing or ``null`` value. Without
``json``, a string is written as is and any other value as compact JSON. A request path that is
missing, with no ``default``, makes the request fail with a 400 naming the template.

A template renders at most :data:`MAX_RENDERED_CHARS` characters per request (8,192): a longer
rendering (an echo of a long message) makes the request fail with a 400 naming the template and
the limit, and a template whose literal text alone is longer is refused at load time. Why: a
templated completion is a new text on each request, and the server tokenizes, parses and
surfaces it while answering, under the lock every request of the server takes, so its cost is
every other client's wait (~4.4 us a character, measured: 8 KB 26 ms, 16 KB 77 ms, 64 KB 0.29 s,
a 5 MB echo 12-15 s; issue 9, the breaker's D10). Tokenizing is the small part (0.38 s of 14 s
for a 2 MB echo, in openai-harmony's ``encode``), the rest the parser trace and the profile's
plan, Python over every token, so neither tokenizing in the prompt-count worker process nor
splitting the text into short tokenizer calls would shorten the other clients' wait; a bound does.
A completion that does not change per request belongs in the scenario as plain text, where it is
prepared once, at load time.

Values are reproducible: the Faker stream is seeded once per request from the scenario's seed
(``seed:``, else the server's), the session key and the request's index
(see :class:`RenderContext`). The output also depends on the installed Faker version's data.
Syntax errors, unknown providers and bad arguments raise :class:`TemplateError` at load time.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from mockoss.scenario.fakers import FAKER_LOCK, FAKER_PROVIDERS, shared_faker
from mockoss.scenario.template_expr import TemplateError, _Expr, _Parser

__all__ = ["FAKER_PROVIDERS", "MAX_RENDERED_CHARS", "RenderContext", "Template", "TemplateError", "TemplateRenderError", "parse_template"]

_MISSING = object()

#: Characters one template may render for one request (see the module docstring). Read when a
#: template loads and renders, so a test may change it (``monkeypatch.setattr``).
MAX_RENDERED_CHARS = 8192


class TemplateRenderError(ValueError):
    """A request lacks a value a template echoes, e.g. ``request has no messages[3]``.

    Raised while answering a request; the server turns it into a 400 error reply.
    """


class RenderContext:
    """What a template reads while answering one request.

    Args:
        body: the parsed request body.
        model: the resolved model name (``request.model``).
        seed: text that seeds Faker, e.g. ``f"{seed}/{session}/{index}"``.
    """

    __slots__ = ("_seeded", "body", "model", "seed")

    def __init__(self, body: Mapping[str, Any], model: str, seed: str) -> None:
        self.body, self.model, self.seed, self._seeded = body, model, seed, False

    def faker(self) -> Any:
        """The shared Faker instance, seeded on first use by this context (hold :data:`FAKER_LOCK`)."""
        fake = shared_faker()
        if not self._seeded:
            fake.seed_instance(self.seed)
            self._seeded = True
        return fake


@dataclass(frozen=True, slots=True)
class Template:
    """A parsed template: literal text and expressions, in order."""

    source: str
    parts: tuple[str | _Expr, ...]

    @property
    def uses_faker(self) -> bool:
        return any(isinstance(p, _Expr) and p.kind == "faker" for p in self.parts)

    def render(self, ctx: RenderContext) -> str:
        """The text for one request.

        Raises:
            TemplateRenderError: a request path is missing and has no ``default``, or the text
                is longer than :data:`MAX_RENDERED_CHARS`.
        """
        text = "".join(p if isinstance(p, str) else _render(p, ctx) for p in self.parts)
        if len(text) > MAX_RENDERED_CHARS:
            raise TemplateRenderError(
                f"template {_short(self.source)!r} rendered {len(text)} characters, over mockoss's limit of "
                f"{MAX_RENDERED_CHARS} per request (mockoss.scenario.template.MAX_RENDERED_CHARS; `mockoss serve "
                f"--max-template-chars N` raises it): a templated "
                "completion is prepared anew for every request, and its cost is every other client's wait"
            )
        return text


def _render(expr: _Expr, ctx: RenderContext) -> str:
    if expr.kind == "faker":
        value = getattr(ctx.faker(), expr.target)(**dict(expr.kwargs))
        if not isinstance(value, (str, int, float, bool)):
            value = str(value)
    elif expr.kind == "request":
        value = _lookup(ctx, expr)
    else:
        value = expr.target
    for name, argument in expr.filters:
        if name == "default":
            value = argument if value is _MISSING or value is None else value
        elif value is not _MISSING:
            value = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    if value is _MISSING:
        raise TemplateRenderError(f"template {expr.source!r}: {_missing_text(ctx, expr)}")
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _lookup(ctx: RenderContext, expr: _Expr) -> Any:
    value: Any = ctx.body
    for position, step in enumerate(expr.target):
        if position == 0 and step == "model":
            value = ctx.model
            continue
        try:
            value = value[step] if isinstance(step, int) == isinstance(value, list) else _MISSING
        except (KeyError, IndexError, TypeError):
            value = _MISSING
        if value is _MISSING:
            return _MISSING
    return value


def _missing_text(ctx: RenderContext, expr: _Expr) -> str:
    value: Any = ctx.body
    shown = ""
    for step in expr.target:
        shown += f"[{step}]" if isinstance(step, int) else (f".{step}" if shown else step)
        try:
            value = value[step] if isinstance(step, int) == isinstance(value, list) else _MISSING
        except (KeyError, IndexError, TypeError):
            value = _MISSING
        if value is _MISSING:
            break
    return f"the request has no {shown}"


_OPEN = "{{"
_CLOSE = "}}"


def _closing(text: str, position: int) -> int:
    """Index of the ``}}`` closing an expression that starts at ``position`` (``}}`` inside a
    string literal does not count), else -1."""
    quote = None
    while position < len(text) - 1:
        char = text[position]
        if quote is not None:
            if char == "\\":
                position += 1
            elif char == quote:
                quote = None
        elif char in "\"'":
            quote = char
        elif text.startswith(_CLOSE, position):
            return position
        position += 1
    return -1


def parse_template(text: str) -> Template | None:
    """Parse ``text``; ``None`` when it holds no ``{{`` (plain text, compiled once).

    Each Faker call is tried once with a fixed seed, so bad argument combinations (``pyint`` with
    ``min_value`` above ``max_value``) are found at load time too.

    Raises:
        TemplateError: an unclosed ``{{``, a syntax error, an unknown provider, name or filter, an
            argument that is not allowed.
    """
    if _OPEN not in text:
        return None
    parts: list[str | _Expr] = []
    position = 0
    while True:
        start = text.find(_OPEN, position)
        if start < 0:
            if position < len(text):
                parts.append(text[position:])
            break
        end = _closing(text, start + 2)
        if end < 0:
            raise TemplateError(f"template {text[start : start + 40]!r}: '{{{{' is never closed by '}}}}'")
        if start > position:
            parts.append(text[position:start])
        source = text[start : end + 2]
        expr = _Parser(source, text[start + 2 : end]).expression()
        if expr.kind == "faker":
            _try(expr)
        parts.append(expr)
        position = end + 2
    literal = sum(len(part) for part in parts if isinstance(part, str))
    if literal > MAX_RENDERED_CHARS:
        raise TemplateError(
            f"template {_short(text)!r}: {literal} characters of literal text, over the {MAX_RENDERED_CHARS} "
            "a template may render per request (mockoss.scenario.template.MAX_RENDERED_CHARS); write the text "
            "without '{{' (prepared once, at load time) or shorten it"
        )
    return Template(text, tuple(parts))


def _short(text: str, keep: int = 60) -> str:
    """``text``, or its start and end around ``…`` when longer than ``keep`` characters."""
    return text if len(text) <= keep else f"{text[: keep // 2]}…{text[-keep // 2 :]}"


def _try(expr: _Expr) -> None:
    with FAKER_LOCK:
        fake = shared_faker()
        fake.seed_instance(0)
        try:
            getattr(fake, expr.target)(**dict(expr.kwargs))
        except Exception as exc:  # noqa: BLE001  # Faker's own check of the arguments
            raise TemplateError(f"template {expr.source!r}: faker.{expr.target} refused the arguments: {exc}") from None


def check_template(text: str) -> str:
    """Pydantic validator: ``text`` unchanged, or a ``template`` validation error."""
    from pydantic_core import PydanticCustomError

    try:
        parse_template(text)
    except TemplateError as exc:
        raise PydanticCustomError("template", "{problem}", {"problem": str(exc)}) from None
    return text
