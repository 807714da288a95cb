"""The gpt_oss reasoning parser's phase of a growing text, kept up to date token by token.

``GptOssReasoningParser.extract_reasoning_streaming`` (waybarrios/vllm-mlx@v0.6.0) is stateless: it
finds the phase of the previous and of the current text by scanning each from the start for
channel headers, so a stream's deltas cost time growing with the text already streamed (a
10,000-token answer: ~0.25 s on a request's first build, quadratic). :class:`PhaseTracker` gives
the same phase (:func:`mockoss.profiles.vllm_mlx.parsers._phase`) reading only what each delta
adds, while the text only grows; any other text is scanned whole, as before.

Why reading the new part is enough. A header is ``<|channel|>`` + ``analysis``/``final`` + text
without ``<`` (with at most one ``<|constrain|>``) + ``<|message|>``, so a header holds no other
``<|channel|>``: the headers are found by trying the header at each ``<|channel|>``, and one that
matched in a text matches in every longer one. A ``<|channel|>`` whose header is not complete
yet may still complete later only while what follows it is a beginning of a header
(:func:`_may_complete`), and only the last ``<|channel|>`` can be (an earlier one has the later
``<|channel|>``'s ``<`` in its way). So each step tries the one waiting ``<|channel|>`` and those in
the new text (from 10 characters before it: a token split across the two), and searches for a
structural token (``<|end|>``…, at most 13 characters) from 12 characters before the new text.
"""

from __future__ import annotations

import re

__all__ = ["PhaseTracker"]

_CHANNEL = "<|channel|>"
_MESSAGE = "<|message|>"
_CONSTRAIN = "<|constrain|>"


def _may_complete(text: str, start: int) -> bool:
    """Whether ``text[start:]`` (from a ``<|channel|>`` whose header did not match) is the
    beginning of a header, which more text could complete."""
    rest = text[start + len(_CHANNEL) :]
    for name in ("analysis", "final"):
        if len(rest) < len(name):
            if name.startswith(rest):
                return True
            continue
        if not rest.startswith(name):
            continue
        tail = rest[len(name) :]
        cut = tail.find("<")
        if cut < 0:
            return True
        tail = tail[cut:]
        if _MESSAGE.startswith(tail) or _CONSTRAIN.startswith(tail):
            return True
        if tail.startswith(_CONSTRAIN):
            after = tail[len(_CONSTRAIN) :]
            cut = after.find("<")
            return cut < 0 or _MESSAGE.startswith(after[cut:])
        return False
    return False


class PhaseTracker:
    """The phase (``init``, ``analysis``, ``transition``, ``final``) of the text a stream has seen.

    :meth:`phases` of a delta reads only the delta when the previous text is the last one given."""

    __slots__ = ("_header", "_last", "_phase", "_structural", "_structural_at", "_text", "_waiting")

    def __init__(self, header: re.Pattern[str], structural: re.Pattern[str]) -> None:
        self._header, self._structural = header, structural
        self._text = ""
        self._phase = "init"
        self._last: re.Match[str] | None = None  # the last header
        self._waiting: int | None = None  # the <|channel|> after it whose header may still complete
        self._structural_at: int | None = None  # where a structural token after the last header starts

    def phases(self, previous: str, current: str, delta: str) -> tuple[str, str]:
        """``(_phase(previous), _phase(current))`` for ``current == previous + delta`` (the
        server's ``current_text = previous_text + delta_text``)."""
        if previous is not self._text or len(current) != len(previous) + len(delta) or not current.endswith(delta):
            self._restart(previous)
        before = self._phase
        self._advance(current, len(previous))
        self._text, self._phase = current, self._current()
        return before, self._phase

    def _restart(self, text: str) -> None:
        """Forget the stream so far and take in ``text`` whole."""
        self._last, self._waiting, self._structural_at = None, None, None
        self._advance(text, 0)
        self._text, self._phase = text, self._current()

    def _current(self) -> str:
        last = self._last
        if last is None:
            return "init"
        if last.group(1) == "final":
            return "final"
        return "transition" if self._structural_at is not None else "analysis"

    def _advance(self, text: str, known: int) -> None:
        """Take in ``text[known:]`` (``text[:known]`` was taken in)."""
        floor = self._last.end() if self._last is not None else 0
        starts = [] if self._waiting is None else [self._waiting]
        position = text.find(_CHANNEL, max(floor, known - len(_CHANNEL) + 1))
        while position >= 0:
            if not starts or position > starts[-1]:
                starts.append(position)
            position = text.find(_CHANNEL, position + 1)
        self._waiting = None
        for start in starts:
            if self._last is not None and start < self._last.end():
                continue
            match = self._header.match(text, start)
            if match is not None:
                self._last, self._structural_at = match, None
                known = match.end()  # the structural search starts after the new header
        if starts and starts[-1] >= (self._last.end() if self._last is not None else 0):
            waiting = starts[-1]
            if (self._last is None or waiting >= self._last.end()) and self._header.match(text, waiting) is None and _may_complete(text, waiting):
                self._waiting = waiting
        if self._last is not None and self._structural_at is None:
            found = self._structural.search(text, max(self._last.end(), known - 12))
            self._structural_at = None if found is None else found.start()
