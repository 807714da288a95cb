"""How long a templated completion may render for a request body of a given size: an upper bound
from the body's length alone, with no false negative (:func:`min_raw_bytes`).

Why: a templated step (:mod:`mockoss.scenario.template`) is rendered for each request, and its
completion is then tokenized, parsed and surfaced while the server lock is held, ~4.4 us a
character (the template module's figures): an echo of a 200,000-character message (``mockoss
serve --max-template-chars 400000``) held every other client ~1.2-2.0 s, and 24 echoes of an
8,000-character message under the default limit ~150-210 ms (``/tmp/o/tmplblk.py``, issue 9,
task O). :mod:`mockoss.server.warmup` renders and warms such a step on a worker thread before the
lock when this bound says it may reach :data:`LONG_CHARS`; the request's own render under the
lock then finds the same :class:`~mockoss.harmony.Completion` in the template's cache, its plans
built.

Why a bound from the length of the raw body, and why it has no false negative: which values a
template echoes is only known once the step is picked (under the lock) and the body parsed, but
every value a ``request.…`` path reaches is written in the body: as text it is at most as many
characters as the body has bytes (a JSON escape is never shorter than the character it stands
for), and as JSON (``| json``, or a value that is not a string) at most 5 times as many: the
compact JSON Python writes for a parsed value is no longer than its source but for floats
(``9e15`` writes ``9000000000000000.0``: 18 characters from 4 bytes). A further ``| json`` at
most doubles a text, plus its quotes. Literal text and literal expressions count as written,
``default(…)``'s argument is added whole, ``request.model`` adds :data:`MODEL_CHARS` (the
resolved name may be the server's: :meth:`TemplateCost.bound` takes the longest served name when
it is longer; issue 9, eleventh-session review TC, finding 1 (d)). A Faker value counts what its provider can write for its arguments (:func:`_faker_chars`,
read from faker 40.63's providers: ``sentence``/``paragraph`` as words x the longest word of the
en_US lorem list, :data:`LOREM_WORD_CHARS`, ``text`` its ``max_nb_chars``, ``pystr`` its
``max_chars``); any other provider :data:`FAKER_CHARS` (without size arguments they write short
values; ``levels``/``depth`` at their schema maxima stay under ~400), plus ``len(str(n)) + 1`` for
each integer argument (``pyint``/``random_int`` write a number between theirs) and 6 times the
length of each string argument (the text ``bothify`` fills in, an ``email`` domain; ``lower()``
at most doubles a character, a JSON escape writes at most 6). Before, any size argument counted
as the cap, which sent every request of such a step to a worker thread (a 16-character
``sentence(nb_words=5)``), and integer and string arguments were not counted (issue 9,
eleventh-session review TC, findings 1 and 2). And each template renders at most
``MAX_RENDERED_CHARS`` characters or the request fails before anything is built
(``TemplateRenderError``), so no template counts more. A fault spec may rewrite the rendered
messages: it counts twice the text and twice its own string parameters (``arguments``,
``text``…), plus 256. Plain messages of the step count whole (they are built again with the
rendered ones), plus a header per message: its channel, recipient and content type, plus 64
(``<|start|>assistant to=``, ``<|channel|>``, ``<|message|>``, ``<|return|>``: 55). A
false positive (a long body that the template does not echo) only answers the request on a
worker thread.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence

from mockoss.scenario import template as template_module
from mockoss.scenario.render import CompletionTemplate
from mockoss.scenario.template import Template
from mockoss.scenario.template_expr import _Expr

__all__ = ["FAKER_CHARS", "LONG_CHARS", "LOREM_WORD_CHARS", "MODEL_CHARS", "TemplateCost", "min_raw_bytes"]

#: A templated completion that may render this many characters or more is rendered and warmed
#: before the lock, on a worker thread (~18 ms of building at ~4.4 us a character).
LONG_CHARS = 4096
#: Characters counted for one Faker value whose call has no size argument (``paragraph()``, the
#: longest such default, writes ~4 sentences: ~500).
FAKER_CHARS = 1024
#: Characters counted for ``request.model`` (the resolved model name), at least.
MODEL_CHARS = 1024
#: The longest word of Faker's en_US lorem list (faker 40.63.0,
#: ``faker/providers/lorem/en_US/__init__.py`` ``word_list``: 971 ASCII words, the longest 14
#: characters; checked against the installed Faker by tests/server/test_template_cost_bound.py).
LOREM_WORD_CHARS = 14


class TemplateCost:
    """The bound of one templated completion: ``plain + sum(min(cap, a + b * raw_bytes + m *
    model_chars))`` over its templates (``terms``: ``(a, b, m)`` each), ``cap`` being
    ``MAX_RENDERED_CHARS`` when asked and ``model_chars`` the longest name ``request.model`` may
    resolve to without the body naming one (the server's served names), :data:`MODEL_CHARS` at least."""

    __slots__ = ("plain", "terms")

    def __init__(self, completion: CompletionTemplate) -> None:
        templates: Sequence[Template | None] = [completion.raw] if completion.raw is not None else [t for _spec, t in completion.messages]
        plain = sum(len(spec.content) for spec, t in completion.messages if t is None)
        plain += sum(len(spec.channel or "") + len(spec.recipient or "") + len(spec.content_type or "") + 64 for spec, _t in completion.messages)
        terms = [_template_terms(t) for t in templates if t is not None]
        if completion.fault is not None:
            plain = 2 * (plain + _strings(completion.fault)) + 256
            terms = [(2 * a + 256, 2 * b, 2 * m) for a, b, m in terms]
        self.plain, self.terms = plain, tuple(terms)

    def bound(self, raw_bytes: int, cap: int | None = None, model_chars: int = MODEL_CHARS) -> float:
        """The most characters the completion may render for a body of ``raw_bytes`` bytes."""
        cap = template_module.MAX_RENDERED_CHARS if cap is None else cap
        model_chars = max(MODEL_CHARS, model_chars)
        return self.plain + sum(min(cap, a + b * raw_bytes + m * model_chars) for a, b, m in self.terms)


def min_raw_bytes(cost: TemplateCost, cap: int | None = None, model_chars: int = MODEL_CHARS) -> float:
    """The smallest body (bytes) for which ``cost`` may reach :data:`LONG_CHARS`; ``inf`` if none.
    The bound grows with the body, so a binary search (once per scenario, cap and model length)."""
    cap = template_module.MAX_RENDERED_CHARS if cap is None else cap
    if cost.bound(1 << 62, cap, model_chars) < LONG_CHARS:
        return math.inf
    low, high = 0, 1 << 62
    while low < high:
        middle = (low + high) // 2
        if cost.bound(middle, cap, model_chars) >= LONG_CHARS:
            high = middle
        else:
            low = middle + 1
    return low


def _strings(value: object) -> int:
    """The characters of every string in a fault spec (its keys and values, nested)."""
    if isinstance(value, str):
        return len(value)
    if isinstance(value, dict):
        return sum(_strings(key) + _strings(item) for key, item in value.items())
    if isinstance(value, (list, tuple)):
        return sum(_strings(item) for item in value)
    return 0


def _at_most(number: int) -> int:
    """The most items Faker's ``randomize_nb_elements(number, min=1)`` gives:
    ``int(number * randint(60, 140) / 100)``, at least 1 (faker/providers/__init__.py)."""
    return max(1, number * 7 // 5 + 1)


def _sentence_chars(words: int) -> int:
    """A lorem sentence of ``words`` words: each word and its connector (a space), and the final
    period (``title()`` keeps an ASCII word's length)."""
    return words * (LOREM_WORD_CHARS + 1) + 1


def _faker_chars(provider: str, kwargs: Sequence[tuple[str, object]]) -> int:
    """The most characters one ``faker.PROVIDER(**kwargs)`` value renders (module docstring),
    before any filter; the arguments are the checked literals of :data:`~mockoss.scenario.fakers.FAKER_PROVIDERS`."""
    args = dict(kwargs)
    texts = 6 * sum(len(value) for value in args.values() if isinstance(value, str))
    if provider == "sentence":
        count = int(args.get("nb_words", 6))  # type: ignore[call-overload]
        return _sentence_chars(_at_most(count) if args.get("variable_nb_words", True) else count)
    if provider == "paragraph":  # sentences of sentence()'s default 6 words (variable), joined by a space
        count = int(args.get("nb_sentences", 3))  # type: ignore[call-overload]
        sentences = _at_most(count) if args.get("variable_nb_sentences", True) else count
        return sentences * (_sentence_chars(_at_most(6)) + 1)
    if provider == "text":  # never longer than max_nb_chars (lorem.text); twice for its newlines' escapes
        return 2 * (int(args.get("max_nb_chars", 200)) + 1)  # type: ignore[call-overload]
    if provider == "pystr":  # prefix + max_chars letters (at most; min_chars <= max_chars) + suffix
        return texts + max(int(args.get("min_chars") or 0), int(args.get("max_chars", 20)))  # type: ignore[call-overload]
    integers = sum(len(str(value)) + 1 for value in args.values() if isinstance(value, int) and not isinstance(value, bool))
    return FAKER_CHARS + texts + integers


def _template_terms(template: Template) -> tuple[float, int, int]:
    """``(a, b, m)``: the template renders at most ``a + b * raw_bytes + m * model_chars``
    characters (module docstring)."""
    a: float = 0
    b = m = 0
    for part in template.parts:
        if isinstance(part, str):
            a += len(part)
            continue
        part_a, part_b, part_m = _expr_terms(part)
        a, b, m = a + part_a, b + part_b, m + part_m
    return a, b, m


def _expr_terms(expr: _Expr) -> tuple[float, int, int]:
    a: float = 0
    b = m = 0
    if expr.kind == "request":
        b = 5  # the server's model name when the body names none, else within the body
        m = 1 if expr.target and expr.target[0] == "model" else 0
    elif expr.kind == "faker":
        a = _faker_chars(expr.target, expr.kwargs)
    else:  # a literal
        a = len(json.dumps(expr.target, ensure_ascii=False))
    dumps = 0
    for name, argument in expr.filters:
        if name == "default":
            a += len(json.dumps(argument, ensure_ascii=False))
        else:  # json: the first is within the bounds above, plus quotes (a served name's escapes:
            # at most 6 characters each); each further one doubles
            dumps += 1
            a, b, m = (a + 2, b, 6 * m) if dumps == 1 else (2 * a + 2, 2 * b, 2 * m)
    return a, b, m
