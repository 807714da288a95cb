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
resolved name may be the server's), a Faker value :data:`FAKER_CHARS` (its providers without size
arguments write short values; with them, such as ``paragraph(nb_sentences=…)``, the template's
own cap). And each template renders at most ``MAX_RENDERED_CHARS`` characters or the request
fails before anything is built (``TemplateRenderError``), so no template counts more. A fault
spec may rewrite the rendered messages: it counts twice the text, plus 256. Plain messages of
the step count whole (they are built again with the rendered ones), plus 32 a message for its
header. A false positive (a long body that the template does not echo) only answers the request
on a worker thread.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence

from mockoss.scenario import template as template_module
from mockoss.scenario.render import CompletionTemplate
from mockoss.scenario.template import Template
from mockoss.scenario.template_expr import _Expr

__all__ = ["FAKER_CHARS", "LONG_CHARS", "MODEL_CHARS", "TemplateCost", "min_raw_bytes"]

#: A templated completion that may render this many characters or more is rendered and warmed
#: before the lock, on a worker thread (~18 ms of building at ~4.4 us a character).
LONG_CHARS = 4096
#: Characters counted for one Faker value whose call has no size argument (``paragraph()``, the
#: longest such default, writes ~4 sentences: ~500).
FAKER_CHARS = 1024
#: Characters counted for ``request.model`` (the resolved model name).
MODEL_CHARS = 1024
#: Faker arguments that set the size of what it writes (or the text it fills in).
_SIZED = frozenset({"nb_sentences", "nb_words", "max_nb_chars", "max_chars", "min_chars", "text", "prefix", "suffix", "depth", "levels", "domain", "extension", "category", "letters"})


class TemplateCost:
    """The bound of one templated completion: ``plain + sum(min(cap, a + b * raw_bytes))`` over
    its templates (``terms``: ``(a, b)`` each), ``cap`` being ``MAX_RENDERED_CHARS`` when asked."""

    __slots__ = ("plain", "terms")

    def __init__(self, completion: CompletionTemplate) -> None:
        templates: Sequence[Template | None] = [completion.raw] if completion.raw is not None else [t for _spec, t in completion.messages]
        plain = sum(len(spec.content) for spec, t in completion.messages if t is None) + 32 * len(completion.messages)
        terms = [_template_terms(t) for t in templates if t is not None]
        if completion.fault is not None:
            plain, terms = 2 * plain + 256, [(2 * a + 256, 2 * b) for a, b in terms]
        self.plain, self.terms = plain, tuple(terms)

    def bound(self, raw_bytes: int, cap: int | None = None) -> float:
        """The most characters the completion may render for a body of ``raw_bytes`` bytes."""
        cap = template_module.MAX_RENDERED_CHARS if cap is None else cap
        return self.plain + sum(min(cap, a + b * raw_bytes) for a, b in self.terms)


def min_raw_bytes(cost: TemplateCost, cap: int | None = None) -> float:
    """The smallest body (bytes) for which ``cost`` may reach :data:`LONG_CHARS`; ``inf`` if none.
    The bound grows with the body, so a binary search (once per scenario and cap)."""
    cap = template_module.MAX_RENDERED_CHARS if cap is None else cap
    if cost.bound(1 << 62, cap) < LONG_CHARS:
        return math.inf
    low, high = 0, 1 << 62
    while low < high:
        middle = (low + high) // 2
        if cost.bound(middle, cap) >= LONG_CHARS:
            high = middle
        else:
            low = middle + 1
    return low


def _template_terms(template: Template) -> tuple[float, int]:
    """``(a, b)``: the template renders at most ``a + b * raw_bytes`` characters (module docstring)."""
    a: float = 0
    b = 0
    for part in template.parts:
        if isinstance(part, str):
            a += len(part)
            continue
        part_a, part_b = _expr_terms(part)
        a, b = a + part_a, b + part_b
    return a, b


def _expr_terms(expr: _Expr) -> tuple[float, int]:
    if expr.kind == "request":
        a: float = MODEL_CHARS if expr.target and expr.target[0] == "model" else 0
        b = 5
    elif expr.kind == "faker":
        a, b = (math.inf if any(name in _SIZED for name, _value in expr.kwargs) else FAKER_CHARS), 0
    else:  # a literal
        a, b = len(json.dumps(expr.target, ensure_ascii=False)), 0
    dumps = 0
    for name, argument in expr.filters:
        if name == "default":
            a += len(json.dumps(argument, ensure_ascii=False))
        else:  # json: the first is within the bounds above, plus quotes; each further one doubles
            dumps += 1
            a, b = (a + 2, b) if dumps == 1 else (2 * a + 2, 2 * b)
    return a, b
