"""Schema ``pattern`` regexes for RE2: ECMA-262 escapes rewritten, a bounded compile cache.

Split from :mod:`mockoss.scenario.schema_check` (whose docstring compares the two dialects);
nothing here knows about JSON Schema beyond what a ``pattern`` string is.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from mockoss.scenario.pattern import re2_search  # the scenario patterns' RE2 build and lone-surrogate rule

__all__ = ["compile_pattern"]


@functools.cache
def _re2_options() -> Any:
    import re2

    options = re2.Options()
    options.log_errors = False
    # Tool-schema patterns are short; RE2's default (8 MiB per regex, shared with its DFA cache)
    # times the cached patterns would let a few requests hold hundreds of MiB.
    options.max_mem = 2 << 20
    return options


_HEX = frozenset("0123456789abcdefABCDEF")


def _ecma_escapes(pattern: str) -> str:
    """ECMA-262 ``\\uXXXX`` and ``\\u{X…}`` as RE2's ``\\x{…}``; every other escape as written."""
    if "\\u" not in pattern:
        return pattern
    out, i, n = [], 0, len(pattern)
    while i < n:
        char = pattern[i]
        if char != "\\" or i + 1 >= n:
            out.append(char)
            i += 1
            continue
        if pattern[i + 1] == "u":
            digits = pattern[i + 2 : i + 6]
            if len(digits) == 4 and set(digits) <= _HEX:
                out.append("\\x{" + digits + "}")
                i += 6
                continue
            end = pattern.find("}", i + 3)
            if pattern[i + 2 : i + 3] == "{" and end > i + 3 and set(pattern[i + 3 : end]) <= _HEX:
                out.append("\\x{" + pattern[i + 3 : end] + "}")
                i = end + 1
                continue
        out.append(pattern[i : i + 2])
        i += 2
    return "".join(out)


def compile_pattern(pattern: str) -> Callable[[str], bool]:
    """``re.search``-style RE2 function of ``pattern``; :class:`ValueError` with RE2's reason when it
    cannot compile. Patterns up to 512 characters are cached (64 of them): a test suite sends the same
    tools on every request."""
    return _compile_cached(pattern) if len(pattern) <= 512 else _compile_new(pattern)


def _compile_new(pattern: str) -> Callable[[str], bool]:
    # Outside re2.compile's own cache (re2_search(cache=False)): only _compile_cached retains patterns.
    return re2_search(_ecma_escapes(pattern), _re2_options(), cache=False)


_compile_cached = functools.lru_cache(maxsize=64)(_compile_new)
