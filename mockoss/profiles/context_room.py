"""Whether a number of tokens holds a completion's whole scripted output: the one question the
context-length checks of the vLLM and SGLang profiles (:mod:`mockoss.profiles.vllm.context_length`,
:mod:`mockoss.profiles.sglang.context_length`) ask when a request sets no token limit and the
server would set one from the room left in the context window (vLLM's ``get_max_tokens``,
SGLang's ``init_req_max_new_tokens``; the sources are cited in those modules).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mockoss.harmony import Completion

__all__ = ["holds_output"]


def holds_output(completion: Completion, room: int) -> bool:
    """Whether ``room`` tokens (an int, may be <= 0) hold the whole scripted output of
    ``completion``, its stop token included, so that a limit of ``room`` gives the reply of no
    limit (:meth:`~mockoss.harmony.Completion.cap`'s rule, read from the emission itself: memo
    keys, not this decision, are ``cap``'s job). Raises nothing of its own."""
    return room >= len(completion.emit(None).tokens)
