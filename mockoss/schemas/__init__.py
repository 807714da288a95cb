"""Pydantic request schemas for the OpenAI-compatible endpoints, as vLLM accepts them."""
