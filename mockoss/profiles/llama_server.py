"""What llama-server generates for a scripted completion: the engine's tokens, shared by the profiles
of servers that run gpt-oss on llama-server (``llamacpp``, and ``ollama`` through its runner).

llama-server stops after the first end-of-generation token of the gpt-oss vocabulary,
``<|return|>``, ``<|call|>`` or ``<|endoftext|>`` (``<|end|>`` is not one: llama.cpp b9553
``src/llama-vocab.cpp:2750-2856``, read at Telosnex/fllama@1d28604d). A script with none of them is
followed by the ``<|endoftext|>`` mockoss's scripted engines emit when a script runs out (the
``vllm`` profile's ``end_of_script_eos``; the llama.cpp and Ollama golden generators feed the same
token): one more generated token, and a limit equal to the script's length then cuts it.
"""

from __future__ import annotations

from mockoss.harmony import Completion
from mockoss.harmony.completion import CALL, END_OF_TEXT, RETURN
from mockoss.harmony.encoding import load_encoding

__all__ = ["END_OF_TEXT", "engine_cap", "engine_completion"]



def engine_completion(completion: Completion) -> Completion:
    """The tokens llama-server generates for ``completion`` with no limit, as a completion.

    Up to and including the first ``<|return|>``, ``<|call|>`` or ``<|endoftext|>`` (llama.cpp
    stops at any end-of-generation token, ``llama_vocab_is_eog``; ``process_token``,
    Telosnex/fllama@1d28604d:src/llama.cpp/tools/server/server-context.cpp:1555-1676, b9553);
    a script with none of them is followed by ``<|endoftext|>``, as the scripted engines emit when
    the script runs out (:func:`mockoss.profiles.vllm.chat_plan.with_end_of_script` for vLLM): one
    more generated token (``eval_count``, the OpenAI layer's ``completion_tokens``), and a
    ``num_predict`` equal to the script's length then cuts it (``done_reason: "length"``, as
    llama-server's budget runs out before the end token). Memoised on ``completion``.
    """
    engine = completion._memo.get("llama-server.engine")
    if engine is None:
        tokens = completion.tokens
        ends = [tokens.index(token) for token in (RETURN, CALL, END_OF_TEXT) if token in tokens]
        first = min(ends) if ends else None
        if first is None:
            engine = Completion(text=completion.text + "<|endoftext|>", tokens=(*tokens, END_OF_TEXT))
        elif tokens[first] == END_OF_TEXT and first + 1 < len(tokens):
            cut = tuple(tokens[: first + 1])
            engine = Completion(text=load_encoding().decode(list(cut)), tokens=cut)
        else:
            engine = completion
        completion._memo["llama-server.engine"] = engine
    return engine  # type: ignore[return-value]


def engine_cap(completion: Completion, max_tokens: int | None) -> int | None:
    """``max_tokens`` as a memo key: :meth:`~mockoss.harmony.Completion.cap` of the engine's
    tokens (:func:`engine_completion`), so that a limit cutting only the appended end token stays
    a cut."""
    return engine_completion(completion).cap(max_tokens)
