"""The weightless gpt-oss model vLLM runs in place of the real one.

vLLM calls a text model's ``embed_input_ids``, ``forward``, ``compute_logits`` and
``load_weights`` (vllm-project/vllm@v0.32.0: ``vllm/model_executor/models/gpt_oss.py``,
``GptOssForCausalLM``; the interface of ``vllm/model_executor/models/interfaces_base.py``). This
model has no parameters and does no arithmetic worth the name: hidden states are zeros, and the
logits put every token at :data:`FLOOR` except :data:`DEFAULT_TOKEN`. The scripted tokens
themselves are forced per request by :class:`mockoss.engines.vllm.logits.ScriptedTokens` (the model
cannot tell requests apart: ``compute_logits`` gets hidden states only), so a request that
reaches vLLM without a script ends at once with ``<|return|>`` instead of sampling noise.

Imported by vLLM only (it needs torch), through :func:`mockoss.engines.vllm.plugin.register`.
"""

from __future__ import annotations

from collections.abc import Iterable

import torch
from torch import nn

__all__ = ["DEFAULT_TOKEN", "FLOOR", "ScriptedGptOss"]

#: ``<|return|>``: what an unscripted request gets (a stop token: the request ends at once).
DEFAULT_TOKEN = 200002
#: The logit of every other token. Finite, so softmax and penalties stay well defined.
FLOOR = -1e9


class ScriptedGptOss(nn.Module):
    """Registered as ``GptOssForCausalLM``; ``vllm_config`` gives the vocabulary and hidden sizes."""

    def __init__(self, *, vllm_config: object, prefix: str = "") -> None:
        super().__init__()
        hf_config = vllm_config.model_config.hf_config  # type: ignore[attr-defined]
        self.vocab_size = int(hf_config.vocab_size)
        self.hidden_size = int(hf_config.hidden_size)
        self.config = hf_config

    def embed_input_ids(self, input_ids: torch.Tensor) -> torch.Tensor:
        """``[tokens] -> [tokens, hidden]`` zeros."""
        return torch.zeros((input_ids.shape[0], self.hidden_size), dtype=torch.float32, device=input_ids.device)

    def forward(
        self,
        input_ids: torch.Tensor | None,
        positions: torch.Tensor,
        intermediate_tensors: object = None,
        inputs_embeds: torch.Tensor | None = None,
        **kwargs: object,
    ) -> torch.Tensor:
        """``[tokens] -> [tokens, hidden]`` zeros."""
        count = positions.shape[-1]
        return torch.zeros((count, self.hidden_size), dtype=torch.float32, device=positions.device)

    def compute_logits(self, hidden_states: torch.Tensor) -> torch.Tensor:
        """``[rows, hidden] -> [rows, vocab]``: :data:`FLOOR` everywhere, 0 at :data:`DEFAULT_TOKEN`."""
        logits = torch.full((hidden_states.shape[0], self.vocab_size), FLOOR, dtype=torch.float32, device=hidden_states.device)
        logits[:, DEFAULT_TOKEN] = 0.0
        return logits

    def load_weights(self, weights: Iterable[tuple[str, torch.Tensor]]) -> set[str]:
        """Nothing to load (vLLM runs with ``--load-format dummy``)."""
        return set()
