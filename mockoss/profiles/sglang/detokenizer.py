"""SGLang's incremental detokenization: the text each decode step adds to a streamed reply.

Reproduces sgl-project/sglang@v0.5.23:python/sglang/srt/managers/detokenizer_manager.py
``DetokenizerManager._decode_batch_token_id_output`` (one token a step, ``--stream-interval 1``)
with ``sglang/utils.py`` ``find_printable_text``; checked against that very code by
``tools/sglang_serving_diff.py``, whose engine half runs it:

* Each step decodes the ids since the last committed text. Text that does not end in U+FFFD (a
  character cut in two) is committed and sent whole.
* Otherwise only its "printable" prefix is sent (up to the last space, all of it after a newline or
  a CJK character, all but the last character after a CJK one) and nothing is committed; the next
  step decodes again from the last commit and sends what was not sent yet.
* The finishing step decodes everything since the last commit with the matched stop token dropped
  (``trim_matched_stop``: kept for ``<|call|>`` under ``--tool-call-parser gpt-oss``, and with
  ``no_stop_trim``) and sends the rest of the text.

The o200k_harmony decode stands in for the model's Hugging Face tokenizer (bytes read as UTF-8 with
U+FFFD for a cut character); ``skip_special_tokens`` drops ids from 199998 up.
"""

from __future__ import annotations

from collections.abc import Sequence

from mockoss.harmony.encoding import FIRST_SPECIAL, load_encoding

__all__ = ["FIRST_SPECIAL", "find_printable_text", "stream_deltas"]

_CJK = ((0x4E00, 0x9FFF), (0x3400, 0x4DBF), (0x20000, 0x2A6DF), (0x2A700, 0x2B73F), (0x2B740, 0x2B81F), (0x2B820, 0x2CEAF),
        (0xF900, 0xFAFF), (0x2F800, 0x2FA1F))


def _is_cjk(char: str) -> bool:
    code = ord(char)
    return any(low <= code <= high for low, high in _CJK)


def find_printable_text(text: str) -> str:
    """The longest prefix of ``text`` made of whole words, as SGLang's ``find_printable_text``."""
    if text.endswith("\n") or (text and _is_cjk(text[-1])):
        return text
    if len(text) > 1 and _is_cjk(text[-2]):
        return text[:-1]
    return text[: text.rfind(" ") + 1]


def stream_deltas(tokens: Sequence[int], *, skip_special: bool, trim_last: bool) -> list[str]:
    """The text each step of a streamed reply adds, one step per token, the last step finishing
    the request (``trim_last``: drop the last token, the matched stop token, from the text).

    Returns:
        one string per token (``""`` for a step that adds nothing).
    """
    encoding = load_encoding()

    def decode(ids: Sequence[int]) -> str:
        kept = [t for t in ids if not (skip_special and t >= FIRST_SPECIAL)]
        return encoding.decode(kept) if kept else ""

    out: list[str] = []
    committed, surr, read, sent = "", 0, 0, 0
    for count in range(1, len(tokens) + 1):
        window = list(tokens[surr:count])
        head = decode(tokens[surr:read])
        if count == len(tokens):
            if trim_last:
                window = window[:-1]
            out.append((committed + decode(window)[len(head):])[sent:])
            break
        new = decode(window)[len(head):]
        pending = sent - len(committed)
        if new and not new.endswith("\ufffd"):
            committed += new
            surr, read, sent = read, count, len(committed)
            out.append(new[pending:])
        else:
            printable = find_printable_text(new)
            sent = len(committed) + len(printable)
            out.append(printable[pending:])
    return out
