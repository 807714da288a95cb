"""Sizing a streamed ``/v1/completions`` reply to several prompts before its frames are built
(:mod:`mockoss.profiles.trtllm.completions`): a batch over
:data:`~mockoss.profiles.reply_limit.MAX_REPLY_BYTES` is refused without writing its frames
(issue 9 review, finding 6)."""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from typing import Any

from mockoss.profiles.wire import dumps

__all__ = ["digit_sum", "over_bound", "placeholder_id"]


def placeholder_id(prefix: str) -> str:
    """An id as long as ``IdSource.next(prefix)``'s (a prefix and 32 hex digits), for sizing."""
    return prefix + "0" * 32


def digit_sum(value: int, stops: list[int]) -> int:
    """``sum(len(str(value + s)) for s in stops)`` for ``value`` ≥ 0 and sorted ``stops`` ≥ 0,
    in a bisection per power of ten."""
    total, power = len(stops), 10
    while stops and value + stops[-1] >= power:
        total += len(stops) - bisect.bisect_left(stops, power - value)
        power *= 10
    return total


def over_bound(
    prompts: Sequence[Any], counts: list[int], reference: int, batches: int, stops: list[int], final: int | None,
    *, echo: bool, bound: int,
) -> int | None:
    """The stream's size after the first prompt that takes it over ``bound`` (what the per-prompt
    check of :func:`mockoss.profiles.trtllm.completions._stream` reports), else ``None``, from the bytes of prompt 0's frames
    (``reference``) without building the others: a prompt's frames differ from prompt 0's only in
    the choice ``index`` (once per engine response, ``batches``), the echoed prompt (the first
    response's text; JSON escapes character by character, so its bytes add up) and, in the usage,
    ``prompt_tokens`` and ``total_tokens`` (``prompt + stop`` for each continuous-usage ``stops``,
    ``prompt + final`` in the usage chunk). Ids have a fixed length."""
    first_prompt, first_count = prompts[0], counts[0]
    echo_base = len(dumps(str(first_prompt)).encode()) if echo else 0
    usage_base = digit_sum(first_count, stops) + len(str(first_count)) * len(stops)
    if final is not None:
        usage_base += len(str(first_count)) + len(str(first_count + final))
    size = 0
    for index, (prompt, count) in enumerate(zip(prompts, counts, strict=True)):
        extra = batches * (len(str(index)) - 1)
        if echo and index:
            extra += len(dumps(str(prompt)).encode()) - echo_base  # strict UTF-8, as the frames are encoded
        if count != first_count:
            usage = digit_sum(count, stops) + len(str(count)) * len(stops)
            if final is not None:
                usage += len(str(count)) + len(str(count + final))
            extra += usage - usage_base
        size += reference + extra
        if size > bound:
            return size
    return None
