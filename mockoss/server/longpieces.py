"""Whether a request body may hold long pre-tokenizer pieces: the bound behind :func:`has_long_run`.

openai-harmony tokenizes with tiktoken's algorithm: its pre-tokenizer regex splits the text into
pieces, then each piece is merged by byte-pair encoding, whose cost grows with the square of the
piece's length in UTF-8 bytes. Measured here (openai-harmony 0.0.11, one piece of 8 KB): 21 ms for
8,192 ``x``, 21 ms for spaces, 19 ms for ``" \\n"`` pairs, 21 ms for ``"\\u00a0 "``, 20 ms for
``"\\u3000 "``, 18 ms for CJK, against 0.7 ms for 8 KB of words: ~0.31 ns x bytes², so a 120 KB
body of one piece holds the event loop ~4.5 s and 60 pieces of 3,900 bytes ~0.3 s (issue 9, the
review's findings 1 and 11).

The pre-tokenizer is o200k's pattern (openai/harmony@55dc3228:src/tiktoken_ext/public_encodings.rs,
``Encoding::pattern`` of ``O200kHarmony``; the same string is in the installed ``openai_harmony`` binary), alternatives
tried in order at each position:

1. ``[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?``
2. ``[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?``
3. ``\\p{N}{1,3}``
4. `` ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*``
5. ``\\s*[\\r\\n]+``
6. ``\\s+(?!\\S)``
7. ``\\s+``

So one piece is a run of letters and marks (CJK has no spaces: a sentence is one piece), a run of
punctuation, symbols and control characters, or a run of whitespace of any mix (Unicode
``White_Space``: ASCII, U+0085, U+00A0, U+1680, U+2000-200A, U+2028/9, U+202F, U+205F, U+3000),
each with at most one character of another kind in front; digits come three at a time. What ends a
piece for sure (a *break*, within one character):

* whitespace followed by a non-whitespace character (the whitespace piece stops; its last
  character may lead the next piece), but for a ``\\n`` or ``\\r`` followed by ``/``: alternative 4
  ends a punctuation piece with any run of ``[\\r\\n/]``, so ``"!" + "\\n/" * 10500`` is one piece
  (a review: 31.6 KB that held another client ~105 ms; no escape before ``/`` is a break now);
* a letter followed by whitespace or by punctuation other than ``'`` (alternatives 1 and 2 end
  at a letter, but for a contraction);
* a CJK punctuation mark (``、。「」『』！（），：；？``): punctuation between letters.

The check reads the raw JSON, not the parsed text, so that it costs next to nothing: the text is
the content of the JSON strings, where ``\\n``, ``\\t``, ``\\u00a0`` or raw UTF-8 may stand for
whitespace; and mockoss joins text parts with nothing between them (vLLM's
``flatten_input_text_content``, :mod:`mockoss.harmony.prompt._common`), so a piece may continue in
the next string. Hence a quote, a backslash (an escape) and a byte of a multi-byte character join
anything, and a break is only claimed where the bytes show it is inside a string: after a space,
a letter other than ``t f n N I`` (``true``, ``false``, ``null``, ``NaN``, ``Infinity`` may follow
a space outside strings) or punctuation JSON does not use between values; before punctuation or
a space, a letter that cannot end such a literal (``e E l N y``) and is not the end of an escape.
Anything else (compact JSON between strings, a base64 blob, digits) is counted as one piece from
break to break: too long, never too short. A false alarm only answers the request on a thread.

The bound: a body of ``n`` bytes whose every stretch of ``w`` bytes holds a break has no piece of
``2w`` bytes, so its pieces cost at most ``2w * n`` bytes² (sum of len² ≤ longest x total). The
fast pass (:func:`may_hold_long_pieces`) takes ``w`` from the budget and the size, and looks in
each aligned window of ``w`` bytes for a space followed by a letter (one ``bytes.find``, found at
once in text). Windows without one are read again with the full list of breaks above, and their
pieces' costs added up (each piece counted whole, to the breaks on either side).
"""

from __future__ import annotations

import re

__all__ = ["MAX_WINDOW", "PIECE_BUDGET", "may_hold_long_pieces", "piece_cost"]

#: The cost, in bytes² of pre-tokenizer pieces, a body may have and stay on the event loop:
#: 64 Mi bytes² is ~21 ms of byte-pair merging at the measured ~0.31 ns per byte² (one piece of
#: 8 KB, or 100 of 800 bytes). The fast pass's bound stays under it, and what it reads again
#: under half of it: a body on the loop costs at most 1.5 times it (~31 ms); above, a thread.
PIECE_BUDGET = 64 * 2**20

#: The largest window of the fast pass (bodies just above the budget's square root).
MAX_WINDOW = 4096

#: Below this window the fast pass's cost grows past its use; only bodies far above
#: :data:`~mockoss.server.offload.OFFLOAD_BYTES` get there (then every window is read again).
_MIN_WINDOW = 64

#: Bigger than this, the body is not read (it goes off the loop: it is far above the byte
#: threshold anyway, and reading it costs ~1 us per window).
_MAX_READ = 4 * 2**20

#: At most this many bytes are read again with the full list of breaks; past it, off the loop.
_MAX_REREAD = 32 * 1024

#: The step of that second reading (its bound adds at most ``2 * _STEP * _MAX_REREAD`` bytes²).
_STEP = 256

_LETTERS_AFTER_SPACE = b"ABCDEFGHJKLMOPQRSTUVWXYZabcdeghijklmopqrsuvwxyz"  # not t f n N I
_PUNCT_AFTER_SPACE = b"!#$%&'()*+./;<=>?@^_`|~"  # not " , - : [ ] { } \ nor digits (JSON between values)
_LITERALS = (b"true", b"false", b"null", b"NaN", b"Infinity")  # Python's json reads the last two
#: What a byte after a space says: 1 the space is in a string, before a character that is not
#: whitespace (letters; punctuation JSON does not use between values; the lead bytes of UTF-8
#: characters none of which is whitespace: not C2, E1, E2, E3); 2 the same unless a literal
#: starts there (``t f n N I``); 3 an escape, to read (:func:`_in_string_after_space`); 0 no.
_SAFE_AFTER_SPACE = bytes(
    1
    if byte in _LETTERS_AFTER_SPACE or byte in _PUNCT_AFTER_SPACE or 0xC3 <= byte <= 0xDF or 0xE4 <= byte <= 0xF4
    else 2
    if byte in b"tfnNI"
    else 3
    if byte == 0x5C
    else 0
    for byte in range(256)
)


def _case_forms(code: str) -> set[bytes]:
    forms = {""}
    for char in code:
        forms = {form + variant for form in forms for variant in {char.lower(), char.upper()}}
    return {form.encode() for form in forms}


#: The four hex digits of every ``\\u`` escape of a whitespace character, in either case
#: (U+001C-001F too: Python's ``str.isspace`` has them, the Rust regex does not).
_SPACE_ESCAPES = frozenset(
    form
    for code in [
        f"{c:04x}"
        for c in (
            *range(0x09, 0x0E),
            *range(0x1C, 0x21),
            0x85,
            0xA0,
            0x1680,
            *range(0x2000, 0x200B),
            0x2028,
            0x2029,
            0x202F,
            0x205F,
            0x3000,
        )
    ]
    for form in _case_forms(code)
)

# Where a piece ends (see the module docstring); the match starts within a character of the break.
_BREAK = re.compile(
    rb"""
    \x20(?=
        [A-HJ-MO-Za-eg-mo-su-z!\#-&'(-+./;<=>?@^_`|~\xc3-\xdf\xe4-\xf4]
      | \xc2[^\x85\xa0] | \xe1(?!\x9a\x80) | \xe2(?!\x80[\x80-\x8a\xa8\xa9\xaf]|\x81\x9f) | \xe3(?!\x80\x80)
      | \\(?:u(?!00(?:0[9a-dA-D]|1[c-fC-F]|20|85|[aA]0)|1680|200[0-9aA]|202[89fF]|205[fF]|3000)[0-9a-fA-F]{4}|["\\/b])
    )
  | \\(?<!\\\\)[nrtf](?=[!\#-.0-\[\]-~]|\xc2[^\x85\xa0]|[\xc3-\xdf\xe4-\xf4])
  | [A-DF-MO-Za-df-kmo-xz](?=[\x20!\#-&(-/:-@\[\]-`{-~]|\\[nrtfb"\\/])(?<!\\.)(?<!\\u[0-9a-fA-F]{3}.)
  | \xe3\x80[\x81\x82\x8c-\x8f] | \xef\xbc[\x81\x88\x89\x8c\x9a\x9b\x9f]
  | \\u(?:300[12c-fC-F]|[fF][fF]0[189cC]|[fF][fF]1[abfABF])
    """,
    re.VERBOSE,
)


def piece_cost(raw: bytes, start: int, end: int, budget: int = PIECE_BUDGET) -> int:
    """An upper bound of the cost (sum of len² in bytes) of the pieces between ``start`` and
    ``end`` of ``raw``, from every kind of break (:data:`_BREAK`), looked for in each aligned
    step of :data:`_STEP` bytes: a stretch through steps that hold one is shorter than two steps;
    one through ``k`` steps without any is counted as ``(k + 2)`` steps long. Stops early, with a
    sum above ``budget``, once the sum passes it."""
    search = _BREAK.search
    total = 2 * _STEP * (end - start)
    run = 0
    for at in range(start, end, _STEP):
        stop = min(at + _STEP, end)
        found = search(raw, at, min(stop + 8, end))  # lookaheads see the next escape
        if found is None or found.start() >= stop:
            run += 1
            if total + ((run + 2) * _STEP) ** 2 > budget:
                return budget + 1
        elif run:
            total += ((run + 2) * _STEP) ** 2
            run = 0
    if run:
        total += ((run + 2) * _STEP) ** 2
    return total


def may_hold_long_pieces(raw: bytes, budget: int = PIECE_BUDGET) -> bool:
    """Whether the pre-tokenizer pieces of ``raw``'s text may cost more than ``budget`` bytes²
    (see the module docstring). Never false when they do (no false negative); sometimes true when
    they do not (compact JSON, base64 or CJK text in long stretches without a space).

    Cost: nothing for a body of at most ``isqrt(budget)`` bytes (8 KiB), which cannot cost more;
    above, one ``bytes.find`` per window (measured in ``tests/server/test_long_pieces.py``).
    """
    size = len(raw)
    if size * size <= budget:
        return False
    if size > _MAX_READ:
        return True
    window = min(MAX_WINDOW, max(_MIN_WINDOW, budget // (2 * size)))
    find = raw.find
    safe = _SAFE_AFTER_SPACE
    last = size - 1
    bad_from = -1  # the start of the current run of windows without a quick break, if any
    bad: list[tuple[int, int]] = []  # such runs, extended to the quick breaks either side
    for start in range(0, size, window):
        end = start + window
        at = find(b" ", start, end)
        if 0 <= at < last and safe[raw[at + 1]] == 1:  # a space before a letter: the usual case
            if bad_from >= 0:
                bad.append((bad_from, at + 1))
                bad_from = -1
            continue
        for _ in range(8):
            if at < 0 or at >= last or _in_string_after_space(raw, at + 1):
                break
            at = find(b" ", at + 1, end)
        else:
            at = -1
        if 0 <= at < last:
            if bad_from >= 0:
                bad.append((bad_from, at + 1))
                bad_from = -1
        elif bad_from < 0:
            bad_from = _last_quick_break(raw, start - window, start) if start else 0
    if bad_from >= 0:
        bad.append((bad_from, size))
    if not bad:
        return False
    # Runs of windows without a quick break: read again with every kind of break.
    if sum(end - start for start, end in bad) > _MAX_REREAD:
        return True
    allowed = budget // 2
    spent = 0
    for start, end in bad:
        spent += piece_cost(raw, start, end, allowed - spent)
        if spent > allowed:
            return True
    return False


def _in_string_after_space(raw: bytes, at: int) -> bool:
    """Whether ``raw[at]``, after a space, starts a character that is not whitespace and that JSON
    does not allow between values (so the space is in a string): for the bytes
    :data:`_SAFE_AFTER_SPACE` leaves open, ``t f n N I`` not starting a literal, and escapes
    (``\\"``, ``\\\\``, ``\\/``, ``\\b``, ``\\u`` of a character that is not whitespace)."""
    kind = _SAFE_AFTER_SPACE[raw[at]]
    if kind == 2:
        return not raw.startswith(_LITERALS, at)
    if kind == 3:
        escaped = raw[at + 1 : at + 2]
        if escaped == b"u":
            return len(raw) >= at + 6 and raw[at + 2 : at + 6] not in _SPACE_ESCAPES
        return escaped != b"" and escaped in b'"\\/b'
    return kind == 1


def _last_quick_break(raw: bytes, start: int, end: int) -> int:
    """The last space in ``raw[start:end]`` followed by a letter or the like
    (:func:`_in_string_after_space`), looking at no more than eight spaces; ``start`` if none."""
    for _ in range(8):
        at = raw.rfind(b" ", start, end)
        if at < 0:
            break
        if _in_string_after_space(raw, at + 1):
            return at
        end = at
    return start
