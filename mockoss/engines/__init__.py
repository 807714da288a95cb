"""Real inference servers behind mockoss's scenarios: the server's own code surfaces scripted completions.

:mod:`mockoss.engines.vllm` runs real vLLM with a weightless gpt-oss whose tokens each request's
scenario step scripts (``mockoss serve --engine vllm``, ``pytest --mockoss-engine vllm``).
"""

__all__ = ["EngineError"]


class EngineError(RuntimeError):
    """A real engine is not installed, or did not start (the message says how to fix it)."""
