"""The vLLM v1 logits processor that forces each request's scripted tokens.

vLLM's sampler applies custom logits processors that are not argmax-invariant before greedy and
random sampling alike (vllm-project/vllm@v0.32.0: ``vllm/v1/sample/sampler.py``,
``Sampler.forward`` → ``apply_logits_processors``); penalties, temperature, top-k/top-p and
min-p act on the row afterwards and cannot move its maximum. The processor is loaded by class name
(``--logits-processors mockoss.engines.vllm.logits:ScriptedTokens``, see
:mod:`mockoss.engines.vllm.launcher`) rather than through the ``vllm.logits_processors`` entry
point group, which vLLM loads unconditionally (``vllm/v1/sample/logits_processor/__init__.py``).

For a request whose ``SamplingParams.extra_args`` carry a script
(:func:`mockoss.engines.vllm.sidechannel.script_of`), the row becomes :data:`FLOOR` everywhere
except 0 at ``script[len(output_tokens)]`` (:data:`~mockoss.engines.vllm.sidechannel.END_OF_SCRIPT`
past its end). Other rows are left alone.

``MOCKOSS_VLLM_STEP_DELAY_MS`` (default 0) makes every step with a scripted row last at least that
long. vLLM's API server merges the outputs of several engine steps into one stream chunk when it
falls behind the engine (``vllm/v1/engine/output_processor.py``, ``RequestOutputCollector``), which
on a loaded machine makes chunking vary from run to run; a few milliseconds per step keep it at one
token per chunk (the golden generator uses it).
"""

from __future__ import annotations

import os
import time
from typing import Any

import torch
from vllm import SamplingParams
from vllm.v1.sample.logits_processor import BatchUpdate, LogitsProcessor
from vllm.v1.sample.logits_processor.builtin import process_dict_updates

from mockoss.engines.vllm.sidechannel import END_OF_SCRIPT, STEP_DELAY_ENV, script_of

__all__ = ["FLOOR", "ScriptedTokens"]

#: The logit of every token but the scripted one.
FLOOR = -1e9


class ScriptedTokens(LogitsProcessor):
    """Forces ``vllm_xargs.mockoss_tokens`` token by token (see the module docstring)."""

    def __init__(self, vllm_config: Any, device: torch.device, is_pin_memory: bool) -> None:
        # batch row -> (script, live output token list)
        self.scripts: dict[int, tuple[tuple[int, ...], list[int]]] = {}
        self.step_delay_s = float(os.environ.get(STEP_DELAY_ENV) or 0) / 1000
        self._last_step = 0.0

    @classmethod
    def validate_params(cls, sampling_params: SamplingParams) -> None:
        """Reject a malformed script (HTTP 400 from vLLM) before the request is scheduled."""
        script_of(sampling_params.extra_args)

    def is_argmax_invariant(self) -> bool:
        """Forcing a token changes the argmax."""
        return False

    @staticmethod
    def _new(params: SamplingParams, prompt: list[int] | None, output: list[int]) -> tuple[tuple[int, ...], list[int]] | None:
        script = script_of(params.extra_args)
        return None if script is None else (script, output)

    def update_state(self, batch_update: BatchUpdate | None) -> None:
        """Track rows joining, leaving and moving in the persistent batch."""
        process_dict_updates(self.scripts, batch_update, self._new)

    def apply(self, logits: torch.Tensor) -> torch.Tensor:
        """``[rows, vocab]`` logits, scripted rows forced in place."""
        if self.scripts and self.step_delay_s:
            wait = self._last_step + self.step_delay_s - time.monotonic()
            if wait > 0:
                time.sleep(wait)
            self._last_step = time.monotonic()
        for row, (script, output) in self.scripts.items():
            position = len(output)
            token = script[position] if position < len(script) else END_OF_SCRIPT
            logits[row].fill_(FLOOR)
            logits[row, token] = 0.0
        return logits
