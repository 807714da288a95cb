"""Fault kinds that break the message stream: framing tokens, tool calls written as text, arguments.

Examples below use the completion ``analysis "Need to list files."`` then
``commentary to=functions.bash <|constrain|>json {"cmd":["ls"]}``; "parser" is openai-harmony
0.0.8's ``StreamableParser`` (``Role.ASSISTANT``, ``strict=True``) as vLLM runs it.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from mockoss.harmony.faults_core import (
    END_TEXT,
    RETURN_TEXT,
    FaultError,
    Job,
    Param,
    fault_kind,
    join,
    text_of,
)

__all__: list[str] = []


def _is_json(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


@fault_kind(
    "tool_call_as_text",
    sources=("NousResearch/hermes-agent#84158", "NousResearch/hermes-agent PR #84231", "cloudflare/ai#574"),
    params=(
        Param(
            "form",
            str,
            "bare",
            "how the call is written: 'bare' `to=functions.NAME {args}`, 'role' `assistant to=…`, "
            "'channel' `<|channel|>commentary to=…`, 'json' `{\"name\": \"NAME\", …args}`",
            choices=("bare", "role", "channel", "json"),
        ),
    ),
)
def tool_call_as_text(job: Job, form: str) -> str:
    """The tool call is written as final-answer text instead of a Harmony tool call.

    Params: ``form``. The target (a tool call) becomes a ``final`` message, no recipient, ending with
    ``<|return|>``. Shapes of its text, for ``recipient=functions.bash`` and arguments ``{"cmd":["ls"]}``:
    ``bare`` ``to=functions.bash {"cmd":["ls"]}``; ``role`` ``assistant to=functions.bash {…}``;
    ``channel`` ``<|channel|>commentary to=functions.bash {…}`` (a special token inside the text);
    ``json`` ``{"name": "bash", "cmd": ["ls"]}`` (name merged into the arguments, which must be a JSON
    object). Parser: no error; a final message with that text. No server catches it; hermes-agent's
    sanitizer matches ``(?:^|[\\s>|])to=functions\\.[A-Za-z_][\\w.]*``.
    """
    recipient, arguments = job.recipient(), text_of(job.message)
    if form == "json":
        parsed: Any = json.loads(arguments) if _is_json(arguments) else None
        if not isinstance(parsed, dict):
            raise job.fail(f"has arguments {arguments!r}, not a JSON object; form 'json' merges them with the name")
        leak = json.dumps({"name": recipient.removeprefix("functions."), **parsed}, ensure_ascii=False)
    else:
        lead = {"bare": "", "role": "assistant ", "channel": f"<|channel|>{job.message.channel or 'commentary'} "}[form]
        leak = f"{lead}to={recipient} {arguments}"
    return join(job.render_target(channel="final", recipient=None, content_type=None, content=leak))


@fault_kind(
    "stray_token_after_end",
    sources=("vllm-project/vllm#46464", "vllm-project/vllm PR #47350", "openai/harmony#60"),
    params=(Param("text", str, None, "what follows `<|end|>`; default the target's own stop token", nullable=True),),
)
def stray_token_after_end(job: Job, text: str | None) -> str:
    """The target closes with ``<|end|>``, then something other than ``<|start|>`` follows.

    Params: ``text`` (default: the stop token the target would have had, ``<|call|>`` for a tool call,
    else ``<|return|>``). Shapes: ``…2 + 2 = 4.<|end|><|return|>``, ``…{"cmd":["ls"]}<|end|><|call|>``,
    ``…<|end|>garbage``. Parser: ``HarmonyError`` ``Unexpected token {id} while expecting start token
    200006`` with the first stray token's id (200002 for ``<|return|>``, 200012 for ``<|call|>``).
    """
    stray = text if text is not None else ("<|call|>" if job.message.recipient else RETURN_TEXT)
    segments = job.segments()
    segments[job.target] = dataclasses.replace(segments[job.target], stop=END_TEXT + stray)
    return join(segments)


@fault_kind(
    "missing_end", sources=("openai/harmony:src/encoding.rs@ec7606d (StreamableParser)", "open-webui/open-webui#16305")
)
def missing_end(job: Job) -> str:
    """A message runs into the next ``<|start|>`` without its ``<|end|>``.

    No params besides ``message``, the message that loses its stop token (default: the last one that
    ends with ``<|end|>`` and is followed by another, typically the analysis). Shape:
    ``<|channel|>analysis<|message|>Need…<|start|>assistant<|channel|>commentary to=…<|message|>{…}<|call|>``.
    Parser: no error; ONE analysis message whose text swallows the rest, special tokens decoded as text
    (``Need…<|start|>assistant<|channel|>commentary to=functions.bash <|constrain|>json<|message|>{…}``).
    """
    segments = job.segments()
    if not job.explicit:
        ends = [i for i, s in enumerate(segments[:-1]) if s.stop == END_TEXT]
        if not ends:
            raise FaultError("message", "missing_end: no message ends with <|end|> before another message")
        job.target = ends[-1]
    elif job.target == len(segments) - 1:
        raise job.fail("is the last message; no <|start|> follows it")
    segments[job.target] = dataclasses.replace(segments[job.target], stop="")
    return join(segments)


@fault_kind(
    "missing_start",
    sources=("openai/harmony#60",),
    params=(
        Param(
            "drop",
            str,
            "role",
            "what is left out: 'start' `<|start|>`, 'role' `<|start|>assistant`, 'channel' `<|start|>assistant<|channel|>`",
            choices=("start", "role", "channel"),
        ),
    ),
)
def missing_start(job: Job, drop: str) -> str:
    """A later message begins without ``<|start|>assistant``: ``…<|end|><|channel|>commentary to=…``.

    Params: ``drop`` (default ``role``). The target must not be the first message; ``channel`` needs
    a header that begins with ``<|channel|>`` (``recipient_position: channel``). Shapes:
    ``…<|end|><|channel|>commentary to=functions.bash …`` (``role``), ``…<|end|>assistant<|channel|>…``
    (``start``), ``…<|end|>commentary to=functions.bash …`` (``channel``). Parser: ``HarmonyError``
    ``Unexpected token {id} while expecting start token 200006``: 173781 (``assistant``) for ``start``,
    200005 (``<|channel|>``) for ``role``, 12606 (``comment``, as in openai/harmony#60) for ``channel``
    on a commentary message.
    """
    if job.target == 0:
        raise job.fail("is the first message, which has no <|start|> (the prompt supplies it)")
    segments = job.segments()
    segment = segments[job.target]
    header = segment.header
    if drop == "channel":
        if not header.startswith("<|channel|>"):
            raise FaultError(
                "drop", f"'channel': message {job.target}'s header {header!r} does not begin with <|channel|>"
            )
        header = header.removeprefix("<|channel|>")
    start = "assistant" if drop == "start" else ""
    segments[job.target] = dataclasses.replace(segment, start=start, header=header)
    return join(segments)


@fault_kind("return_instead_of_call", sources=("sgl-project/sglang PR #10576",))
def return_instead_of_call(job: Job) -> str:
    """A tool call closed with ``<|return|>`` instead of ``<|call|>``.

    No params; the target must be a tool call. Shape: ``…<|constrain|>json<|message|>{"cmd":["ls"]}<|return|>``.
    Parser: no error; the tool-call message is complete, recipient kept. Sampling still stops there
    (both are in ``stop_tokens_for_assistant_actions()``), but a server reading the stop token as
    "answer done" reports ``finish_reason: stop``.
    """
    job.recipient()
    segments = job.segments()
    segments[job.target] = dataclasses.replace(segments[job.target], stop=RETURN_TEXT)
    return join(segments)


def _not_json(value: str) -> str | None:
    return f"{value!r} is valid JSON; give arguments that are not" if _is_json(value) else None


def _plain(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [word for item in value for word in _plain(item)]
    if isinstance(value, dict):
        return [word for item in value.values() for word in _plain(item)]
    return [json.dumps(value)]


@fault_kind(
    "arguments_not_json",
    sources=("continuedev/continue#10221", "ollama/ollama#12884", "ollama/ollama#11781"),
    params=(
        Param(
            "arguments",
            str,
            None,
            "the tool call's text; default: the argument values as a plain line, e.g. 'ls -R\\n'",
            nullable=True,
            check=_not_json,
        ),
    ),
)
def arguments_not_json(job: Job, arguments: str | None) -> str:
    """A tool call whose arguments are not JSON, e.g. a bare command line before ``<|call|>``.

    Params: ``arguments`` (must not parse as JSON). Default: the values of the target's JSON
    arguments, flattened, space-joined, plus a newline: ``{"cmd":["ls","-R"]}`` gives ``ls -R\\n``, as
    in continue#10221 (``raw='ls -R\\n'``). Shape: ``…<|constrain|>json<|message|>ls -R\\n<|call|>``. Parser: no error; the tool call carries that text. Ollama
    answers HTTP 500 ``error parsing tool call: raw='ls -R\\n', err=invalid character 'l' …``; vLLM
    passes the raw text as ``arguments``.
    """
    job.recipient()
    if arguments is None:
        original = text_of(job.message)
        parsed = json.loads(original) if _is_json(original) else None
        arguments = " ".join(_plain(parsed)) + "\n" if isinstance(parsed, dict) else None
        if arguments is None or _is_json(arguments):
            raise FaultError("arguments", f"cannot derive non-JSON arguments from {original!r}; give 'arguments'")
    return join(job.render_target(content=arguments))


@fault_kind(
    "analysis_only",
    sources=("ggml-org/llama.cpp#15789",),
    params=(
        Param("stop_token", str, "<|end|>", "what closes the last analysis message", choices=("<|end|>", "<|return|>")),
    ),
    targets=False,
)
def analysis_only(job: Job, stop_token: str) -> str:
    """The model reasons and stops: only the analysis messages (without recipient) are emitted.

    Params: ``stop_token`` (``<|end|>`` by default, or ``<|return|>``) closes the last one. Shape:
    ``<|channel|>analysis<|message|>Need to list files.<|end|>``. Parser: no error; analysis messages
    only, no final and no tool call (servers surface reasoning with empty content).
    """
    keep = [i for i, m in enumerate(job.messages) if m.channel == "analysis" and not m.recipient]
    if not keep:
        raise FaultError("messages", "analysis_only needs at least one analysis message without a recipient")
    segments = job.segments(only=keep)
    segments[-1] = dataclasses.replace(segments[-1], stop=stop_token)
    return join(segments)
