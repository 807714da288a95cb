"""Real vLLM with a scripted gpt-oss: vLLM's own serving code surfaces mockoss's completions.

Layout (each module one job; sources at vllm-project/vllm@v0.32.0 in their docstrings):

* :mod:`~mockoss.engines.vllm.model_dir`: the model directory (``config.json`` of a tiny gpt-oss,
  ``generation_config.json``, an o200k_harmony ``tokenizer.json``), built offline and cached.
* :mod:`~mockoss.engines.vllm.plugin`: the ``vllm.general_plugins`` entry point registering
  :class:`~mockoss.engines.vllm.model.ScriptedGptOss` as ``GptOssForCausalLM``.
* :mod:`~mockoss.engines.vllm.sidechannel`: how each request's completion tokens reach vLLM
  (``vllm_xargs`` → ``SamplingParams.extra_args``), and
  :mod:`~mockoss.engines.vllm.logits`, the v1 logits processor that forces them.
* :mod:`~mockoss.engines.vllm.launcher`: starts and stops ``vllm.entrypoints.openai.api_server``.

The front is mockoss's own server in ``scripted`` upstream mode (:mod:`mockoss.upstream.proxy`):
``mockoss serve --engine vllm``, or ``pytest --mockoss-engine vllm``. Only the launcher, the
side channel and the model directory's check are imported outside vLLM's processes.
"""
