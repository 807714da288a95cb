"""The per-request side channel: how each request's scripted completion reaches vLLM's sampler.

Decision: the front (:mod:`mockoss.upstream.proxy`, mode ``"scripted"``) adds the completion's
o200k_harmony token ids to the request body as ``vllm_xargs: {"mockoss_tokens": [ids…]}``, and a
vLLM v1 logits processor (:class:`mockoss.engines.vllm.logits.ScriptedTokens`) forces them, one
per decoding step. Why this channel:

* vLLM 0.32 accepts ``vllm_xargs`` (a dict of strings, numbers or lists of them) on both
  ``/v1/chat/completions`` and ``/v1/responses`` and copies it into ``SamplingParams.extra_args``
  (vllm-project/vllm@v0.32.0: ``vllm/entrypoints/openai/chat_completion/protocol.py`` and
  ``vllm/entrypoints/openai/responses/protocol.py``, ``vllm_xargs`` / ``to_sampling_params``).
* A v1 logits processor sees every request's ``SamplingParams`` and a live reference to its output
  token list when the request joins the batch (``vllm/v1/sample/logits_processor/interface.py``,
  ``BatchUpdate.added``), so the script is per request, concurrency-safe, and needs neither a
  marker in the prompt nor one request at a time. The prompt and every other request field reach
  vLLM as the client sent them, so vLLM's own rendering, validation and token counts are real.
* vLLM echoes neither ``vllm_xargs`` nor ``extra_args`` in any response body, so the channel is
  invisible to the client.

When the script runs out without a stop token (a truncated fault), the processor forces
:data:`END_OF_SCRIPT` (``<|endoftext|>``, one of the ``eos_token_id`` of gpt-oss's
``generation_config.json``), on which vLLM stops.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["END_OF_SCRIPT", "STEP_DELAY_ENV", "XARGS_KEY", "attach", "script_of"]

#: Environment variable of vLLM's process: least milliseconds per engine step that has a scripted
#: row (see :mod:`mockoss.engines.vllm.logits`; the golden generator sets it).
STEP_DELAY_ENV = "MOCKOSS_VLLM_STEP_DELAY_MS"
#: The ``vllm_xargs`` key holding the token ids.
XARGS_KEY = "mockoss_tokens"
#: Forced once the scripted tokens run out: ``<|endoftext|>``.
END_OF_SCRIPT = 199999
_VOCAB = 201088


def attach(body: Mapping[str, Any], tokens: Sequence[int]) -> dict[str, Any]:
    """A copy of request ``body`` whose ``vllm_xargs`` carries ``tokens`` (the client's own
    ``vllm_xargs`` entries are kept; a non-dict ``vllm_xargs`` is replaced so vLLM sees the script)."""
    out = dict(body)
    given = out.get("vllm_xargs")
    xargs = dict(given) if isinstance(given, Mapping) else {}
    xargs[XARGS_KEY] = [int(token) for token in tokens]
    out["vllm_xargs"] = xargs
    return out


def script_of(extra_args: Mapping[str, Any] | None) -> tuple[int, ...] | None:
    """The scripted token ids in a request's ``SamplingParams.extra_args``, else ``None``.

    Raises:
        ValueError: the entry is present but not a list of token ids in 0–201087 (vLLM turns a
            ``ValueError`` from a logits processor's ``validate_params`` into HTTP 400).
    """
    if not extra_args or XARGS_KEY not in extra_args:
        return None
    value = extra_args[XARGS_KEY]
    if not isinstance(value, list) or not all(isinstance(t, int) and not isinstance(t, bool) and 0 <= t < _VOCAB for t in value):
        raise ValueError(f"vllm_xargs.{XARGS_KEY} must be a list of token ids in 0-{_VOCAB - 1}")
    return tuple(value)
