"""The vLLM general plugin: swaps gpt-oss for the scripted model, only when mockoss asks.

vLLM runs every function of the entry point group ``vllm.general_plugins`` in each of its
processes (vllm-project/vllm@v0.32.0: ``vllm/plugins/__init__.py``, ``load_general_plugins``;
``VLLM_PLUGINS`` restricts which). mockoss declares :func:`register` there (pyproject.toml). It
does nothing unless ``MOCKOSS_VLLM_SCRIPTED=1``, which :mod:`mockoss.engines.vllm.launcher` sets:
installing mockoss next to a real vLLM must not replace a user's real gpt-oss.

The model is registered under gpt-oss's own architecture name ``GptOssForCausalLM``: vLLM keys
the reasoning parser default (``openai_gptoss``) on it (``vllm/model_executor/models/config.py``,
``GptOssForCausalLMConfig``), so the scripted server takes exactly the paths a real one does.
"""

from __future__ import annotations

import os

__all__ = ["ENABLE_ENV", "PLUGIN_NAME", "register"]

#: Set to ``1`` to make :func:`register` act.
ENABLE_ENV = "MOCKOSS_VLLM_SCRIPTED"
#: The entry point's name (what ``VLLM_PLUGINS`` lists).
PLUGIN_NAME = "mockoss_scripted"


def register() -> None:
    """Register :class:`~mockoss.engines.vllm.model.ScriptedGptOss` as ``GptOssForCausalLM``
    (lazily, by ``module:class`` string) when ``MOCKOSS_VLLM_SCRIPTED=1``; otherwise do nothing."""
    if os.environ.get(ENABLE_ENV) != "1":
        return
    from vllm import ModelRegistry

    ModelRegistry.register_model("GptOssForCausalLM", "mockoss.engines.vllm.model:ScriptedGptOss")
