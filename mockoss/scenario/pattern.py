"""Regular expressions of scenario files (``match`` rules), run by RE2: linear in the text, always.

Why RE2 and not a time budget: a ``match`` rule is tried on every request, against text the
client sends (the last user message, a tool result, a header), so a backtracking engine lets one
request with the wrong text stall the server for seconds (``^(a+)+$`` on 26 characters took 6.4 s
with Python's :mod:`re`; mockoss issue 9). RE2 (``google-re2`` on PyPI, Google's engine with
official Python bindings) runs in time linear in the text for every pattern it accepts, so no
pattern or text can stall the server, and a pattern it cannot run is refused when the scenario
loads, with file, line and field, instead of timing out on some request later. A time budget
(the ``regex`` package's ``timeout=``) would keep backreferences and lookarounds but would still
burn its whole budget on the event loop's CPU on every matching request, and fail at run time.

Syntax: Python's :mod:`re` syntax minus what needs backtracking: no backreferences (``\\1``,
``(?P=name)``), no lookahead or lookbehind (``(?=…)``, ``(?!…)``, ``(?<=…)``), no ``(?x)``,
``(?a)``, ``(?L)``, no possessive or atomic groups; repetition counts up to 1000. ``\\Z`` (end of
text, Python) is accepted and means RE2's ``\\z``. Differences that do not fail: ``\\d``, ``\\w``,
``\\s`` and ``\\b`` are ASCII in RE2 (Python: Unicode); use ``\\p{L}``, ``\\p{N}`` for Unicode
classes (RE2 has them, Python's ``re`` has not). Inline flags ``(?i)``, ``(?m)``, ``(?s)`` work
as in Python. Reference: https://github.com/google/re2/wiki/Syntax.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

__all__ = ["PatternError", "compile_search", "re2_search"]


@functools.cache
def _options() -> Any:
    """RE2's options for scenario patterns; RE2 (2-3 MB of shared library) is loaded by the first
    scenario that has a pattern, not by every served mockoss (issue 9, start-up memory)."""
    import re2

    options = re2.Options()
    options.log_errors = False  # the error goes into the ScenarioError; RE2 would also print it to stderr
    return options


class PatternError(ValueError):
    """A pattern RE2 cannot run; ``str()`` says why (RE2's own words)."""


def _translate(pattern: str) -> str:
    """Python-only escapes RE2 spells differently: ``\\Z`` → ``\\z`` (end of text)."""
    if "\\Z" not in pattern:
        return pattern
    out, chars = [], iter(pattern)
    for char in chars:
        if char == "\\":
            following = next(chars, "")
            out.append("\\z" if following == "Z" else "\\" + following)
        else:
            out.append(char)
    return "".join(out)


def compile_search(pattern: str) -> Callable[[str], bool]:
    """Compile ``pattern`` with RE2; the result tells whether it occurs anywhere in a text
    (``re.search`` semantics), in time linear in the text.

    Text holding lone surrogates (valid in a Python ``str``, not in UTF-8) is searched with each
    one replaced by U+FFFD (three of them: one per byte of its ``surrogatepass`` form), and so is a
    pattern holding them (``last_user: "\\AHi \\uD800\\Z"``, as ``mockoss serve --record``
    writes a prompt that held one), so such a pattern matches the text it was taken from.

    Raises:
        PatternError: RE2 cannot compile ``pattern`` (syntax error, or a feature it refuses to run
            in linear time, e.g. a backreference).
    """
    try:
        return re2_search(_translate(pattern), _options())
    except PatternError as exc:
        reason = str(exc)
        if "perl operator" in reason or "escape sequence" in reason:
            reason += " (RE2 runs in linear time and has no backreferences, lookarounds or (?x); see mockoss.scenario.pattern)"
        raise PatternError(reason) from None


def re2_search(pattern: str, options: Any, *, cache: bool = True) -> Callable[[str], bool]:
    """The RE2 ``search`` test of ``pattern`` as written (no translation), lone surrogates in the
    pattern and the text replaced as :func:`compile_search` says; :class:`PatternError` with RE2's
    own reason. ``cache=False`` builds the regex outside ``re2.compile``'s own 128-entry cache
    (``re2._Regexp``, the class it builds: google-re2 1.1's re2/__init__.py), for patterns a client
    sends (:mod:`mockoss.scenario.schema_re2`, for the tool checks), so RE2 retains only what its caller caches."""
    import re2

    build = re2.compile if cache else getattr(re2, "_Regexp", re2.compile)
    try:
        compiled = build(_without_surrogates(pattern), options)
    except re2.error as exc:
        reason = exc.args[0].decode("utf-8", "replace") if exc.args and isinstance(exc.args[0], bytes) else str(exc)
        raise PatternError(reason) from None
    search = compiled.search

    def found(text: str) -> bool:
        try:
            return search(text) is not None
        except UnicodeEncodeError:  # a lone surrogate: RE2 reads UTF-8
            return search(_without_surrogates(text)) is not None

    return found


def _without_surrogates(text: str) -> str:
    """``text`` with each lone surrogate replaced by U+FFFD characters (UTF-8 has no form for it)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogatepass").decode("utf-8", "replace")
    return text
