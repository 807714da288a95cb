"""Scenarios of raw completions for the per-profile end-to-end modules (their fixtures are in
``conftest.py``)."""

from __future__ import annotations

from mockoss.scenario.loader import scenario_from_data


def use_raw(server, *raw: str, name: str) -> None:
    """Serve one step per raw Harmony completion in ``raw``, in order."""
    steps = [{"completion": {"raw": text}} for text in raw]
    server.server.use_scenario(scenario_from_data({"steps": steps}, name=name, default_version=True))


def stream_chat(client, model: str, messages: list, reasoning_field: str, *, merge_calls: bool = False, **kwargs) -> tuple:
    """``(content, reasoning, calls, finish_reason, chunks)`` of a streamed chat completion through
    the openai SDK: text deltas joined, reasoning read from the ``reasoning_field`` extra,
    ``calls`` as ``(name, arguments)`` per tool-call delta, or joined per call index with
    ``merge_calls``."""
    content, reasoning, finish, chunks = "", "", None, []
    deltas: list[tuple[str, str]] = []
    merged: dict[int, tuple[str, str]] = {}
    with client.chat.completions.create(model=model, messages=messages, stream=True, **kwargs) as stream:
        for chunk in stream:
            chunks.append(chunk)
            if not chunk.choices:
                continue
            delta = chunk.choices[0].delta
            content += delta.content or ""
            reasoning += (delta.model_extra or {}).get(reasoning_field) or ""
            for call in delta.tool_calls or ():
                if merge_calls:
                    name, args = merged.get(call.index, ("", ""))
                    merged[call.index] = (name + (call.function.name or ""), args + (call.function.arguments or ""))
                else:
                    deltas.append((call.function.name, call.function.arguments))
            finish = chunk.choices[0].finish_reason or finish
    return content, reasoning, list(merged.values()) if merge_calls else deltas, finish, chunks
