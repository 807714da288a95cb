"""Personal details in recorded prompts, replaced by seeded Faker values (``mockoss serve --redact``).

Simple detectors, in this order (a later one never overlaps an earlier find):

``email``
    ``local@domain.tld``.
``phone``
    7 to 15 digits written as a phone number: an optional ``+`` country code, an optional
    ``(area)``, then digit groups separated by single spaces or dashes (at least one separator,
    or the ``+``). ``2026-01-01``-style dates are not phones; numbers with dots are never read.
``name``
    A capitalised word or two after ``Mr``/``Mrs``/``Ms``/``Miss``/``Mx``/``Dr``/``Prof``
    (the title is kept), after "my name is", "I'm", "I am", "call me" or "name:" (any case), and
    a first name from Faker's ``en_US`` list followed by a capitalised surname (``Ada Lovelace``).

Each detected value is replaced by a Faker (``en_US``) value of its kind (``email(safe=True)``,
``phone_number()``, ``name()`` or ``first_name()`` for one word) drawn from a Faker seeded with
``"{seed}/{kind}/{value}"``: the same person gets the same stand-in across a recording and across
runs (for a given Faker version). Detection is heuristic: it misses details written otherwise
and may replace a capitalised pair that is not a name.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from mockoss.scenario.fakers import FAKER_LOCK, shared_faker

__all__ = ["Redacted", "Redactor"]

_WORD = r"[A-Z][a-z]+(?:[-'][A-Z]?[a-z]+)?"
_EMAIL = re.compile(r"(?<![\w.%+-])[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}\b")
_PHONE = re.compile(
    r"(?<![\w+])(?<!\d[.-])(?:\+\d{1,3}[ -]?)?(?:\(\d{1,4}\)[ -]?)?\d{1,5}(?:[ -]\d{1,5}){0,5}(?!\w|[.-]\d)"
)
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_TITLED = re.compile(rf"\b(?:Mrs|Mr|Ms|Miss|Mx|Dr|Prof)\.?\s+(?P<name>{_WORD}(?:\s+{_WORD})?)")
_INTRODUCED = re.compile(rf"(?i:\b(?:my name is|i'm|i am|call me|name:))\s+(?P<name>{_WORD}(?:\s+{_WORD})?)")


@functools.cache
def _known_full_name() -> re.Pattern[str]:
    from faker.providers.person.en_US import Provider

    firsts = "|".join(sorted(map(re.escape, Provider.first_names), key=len, reverse=True))
    return re.compile(rf"\b(?P<name>(?:{firsts})\s+{_WORD})\b")


@dataclass(frozen=True, slots=True)
class Redacted:
    """A text with its personal details replaced.

    Attributes:
        text: the redacted text.
        spans: ``(start, end, kind)`` of each replaced value in the *original* text, in order.
    """

    text: str
    spans: tuple[tuple[int, int, str], ...]

    def pattern(self, original: str) -> str:
        """A regex matching exactly ``original`` with each replaced value as a wildcard (``.+?``),
        anchored ``\\A…\\Z``: a rule can match the real prompt without storing the details."""
        parts, position = [r"\A"], 0
        for start, end, _ in self.spans:
            parts += [re.escape(original[position:start]), r".+?"]
            position = end
        parts += [re.escape(original[position:]), r"\Z"]
        return "".join(parts)


class Redactor:
    """Finds emails, phone numbers and names and replaces them (see the module docstring).

    Args:
        seed: seeds the replacements with the value itself.
    """

    def __init__(self, seed: int | str = 0) -> None:
        self.seed = seed

    def find(self, text: str) -> list[tuple[int, int, str]]:
        """``(start, end, kind)`` of every detected value, in order, none overlapping."""
        found: list[tuple[int, int, str]] = []

        def add(start: int, end: int, kind: str) -> None:
            if all(end <= s or start >= e for s, e, _ in found):
                found.append((start, end, kind))

        for match in _EMAIL.finditer(text):
            add(match.start(), match.end(), "email")
        for match in _PHONE.finditer(text):
            value = match.group()
            digits = sum(c.isdigit() for c in value)
            separated = value.startswith("+") or any(c in " -()" for c in value)
            if 7 <= digits <= 15 and separated and not _DATE.fullmatch(value):
                add(match.start(), match.end(), "phone")
        for pattern in (_TITLED, _INTRODUCED, _known_full_name()):
            for match in pattern.finditer(text):
                add(match.start("name"), match.end("name"), "name")
        return sorted(found)

    def stand_in(self, kind: str, value: str) -> str:
        """The Faker value replacing ``value`` (same input, same output)."""
        with FAKER_LOCK:
            fake = shared_faker()
            fake.seed_instance(f"{self.seed}/{kind}/{value}")
            if kind == "email":
                return str(fake.email(safe=True))
            if kind == "phone":
                return str(fake.phone_number())
            return str(fake.name() if " " in value.strip() else fake.first_name())

    def redact(self, text: str) -> Redacted:
        """``text`` with every detected value replaced by its stand-in."""
        spans = tuple(self.find(text))
        out, position = [], 0
        for start, end, kind in spans:
            out += [text[position:start], self.stand_in(kind, text[start:end])]
            position = end
        out.append(text[position:])
        return Redacted("".join(out), spans)
