"""Raw upstream mode: a real model's Harmony completion for a request, surfaced by any profile.

The request is rendered as the Harmony prompt its endpoint's renderer gives
(:data:`mockoss.endpoints.ENDPOINTS`: :func:`mockoss.harmony.prompt.render_chat_prompt` /
``render_responses_prompt`` for ``/v1`` chat and Responses, tools included; Ollama's own template
for ``/api/*``), sent to the upstream's ``POST /v1/completions`` and the returned text becomes a
:class:`~mockoss.harmony.Completion` (``Completion.from_text``), which :meth:`MockServer.respond
<mockoss.server.core.MockServer.respond>` surfaces as a scripted one.

The ``/v1/completions`` body, for vLLM (``vllm/entrypoints/openai/completion/protocol.py@002032ee``,
``CompletionRequest``: ``prompt`` may be a list of token ids; ``max_tokens`` defaults to 16 and
``null`` means "up to the context length"; the other fields below are its sampling extras)::

    {"model": M, "prompt": [ids…] | "text", "max_tokens": N | null, "stream": false,
     "skip_special_tokens": false, "spaces_between_special_tokens": false,
     "include_stop_str_in_output": true, "stop_token_ids": [200002, 200012],
     + temperature, top_p, top_k, min_p, seed, presence_penalty, frequency_penalty when the request sets them}

``stop_token_ids`` are openai-harmony's ``stop_tokens_for_assistant_actions()`` (``<|return|>``,
``<|call|>``), what vLLM stops gpt-oss on. vLLM's detokenizer leaves the stop token out of the text
unless ``include_stop_str_in_output``; a server that ignores that flag is covered too: a ``stop``
finish whose text lacks the stop token gets ``<|call|>`` appended when ``stop_reason`` is 200012,
else ``<|return|>``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import httpx2

from mockoss.endpoints import ENDPOINTS
from mockoss.harmony import Completion, load_encoding
from mockoss.harmony.completion import CALL, RETURN
from mockoss.harmony.encoding import id_slices
from mockoss.scenario.loader import Step
from mockoss.scenario.schema import ScriptedError
from mockoss.upstream.record import ROUNDTRIP_KEY
from mockoss.workers import DaemonPool, run_off_loop

if TYPE_CHECKING:
    from mockoss.upstream.config import Upstream

__all__ = [
    "STOP_TOKEN_IDS", "UPSTREAM_STATUS", "ask_upstream", "completion_content", "completion_request", "completion_text", "describe", "failure",
]  # fmt: skip

#: ``<|return|>``, ``<|call|>``: openai-harmony's ``stop_tokens_for_assistant_actions()``.
STOP_TOKEN_IDS = (RETURN, CALL)
#: Status of every upstream failure (unreachable, timed out, non-200, unreadable answer).
UPSTREAM_STATUS = 502
#: Characters of an upstream's error body quoted in the 502 message.
EXCERPT_CHARS = 500

_SAMPLING = ("temperature", "top_p", "top_k", "min_p", "seed", "presence_penalty", "frequency_penalty")


def _limit(endpoint: str, body: Mapping[str, Any], model: str) -> int | None:
    """The request's completion token limit, as its endpoint's view reads it (``None``: none)."""
    view = ENDPOINTS[endpoint].schema.model_validate(body).view(model, dict(body))  # type: ignore[attr-defined]
    for name in ("max_tokens", "max_output_tokens"):
        value = getattr(view, name, None)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    return None


def completion_request(
    upstream: Upstream, endpoint: str, body: Mapping[str, Any], model: str, prompt_ids: list[int] | None = None
) -> dict[str, Any]:
    """The ``/v1/completions`` body asking ``upstream`` for the raw completion of ``body``.

    Args:
        endpoint: the endpoint name the client called, e.g. ``"chat"``.
        body: the client's validated JSON body.
        model: the request's model (``upstream.model`` wins).
        prompt_ids: the prompt's token ids if already rendered (``ENDPOINTS[endpoint].render_prompt(body)``);
            ``None``: rendered here.

    Raises:
        pydantic.ValidationError: ``body`` is not valid for ``endpoint`` (validate it first).
    """
    if prompt_ids is None:
        prompt_ids = ENDPOINTS[endpoint].render_prompt(body)
    prompt: list[int] | str = list(prompt_ids)
    if upstream.prompt == "text":
        prompt = load_encoding().decode(prompt)
    out: dict[str, Any] = {
        "model": upstream.model or model,
        "prompt": prompt,
        "max_tokens": _limit(endpoint, body, model),
        "stream": False,
        "skip_special_tokens": False,
        "spaces_between_special_tokens": False,
        "include_stop_str_in_output": True,
        "stop_token_ids": list(STOP_TOKEN_IDS),
    }
    options = body.get("options")  # Ollama's native sampling options
    for source in (body, options if isinstance(options, Mapping) else {}):
        for name in _SAMPLING:
            value = source.get(name)
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                out[name] = value
    return out


def completion_text(data: Any) -> str:
    """The Harmony text of a ``/v1/completions`` answer: ``choices[0].text``, ending with its stop
    token when generation stopped on one (see the module docstring).

    Raises:
        ValueError: ``data`` has no ``choices[0].text`` string.
    """
    try:
        choice = data["choices"][0]
        text = choice["text"]
    except (KeyError, IndexError, TypeError):
        raise ValueError("no choices[0].text in the answer") from None
    if not isinstance(text, str):
        raise ValueError("choices[0].text is not a string")  # noqa: TRY004  # _answer_step catches ValueError
    if choice.get("finish_reason") == "stop" and not text.endswith(("<|return|>", "<|call|>")):
        text += "<|call|>" if choice.get("stop_reason") == CALL else "<|return|>"
    return text


def failure(upstream: Upstream, message: str) -> Step:
    """The step answering a request the upstream could not: HTTP 502 in the profile's error shape,
    ``mockoss: upstream URL …`` (URL without credentials)."""
    return Step(
        index=0,
        completion=None,
        error=ScriptedError(status=UPSTREAM_STATUS, message=f"mockoss: upstream {upstream.safe_url} {message}"),
    )


def describe(error: httpx2.HTTPError) -> str:
    """An httpx failure in words: ``is unreachable: …`` or ``did not answer within N s (ReadTimeout)``."""
    if isinstance(error, httpx2.TimeoutException):
        return f"did not answer in time ({type(error).__name__})"
    if isinstance(error, httpx2.ConnectError):
        return f"is unreachable: {str(error) or type(error).__name__}"
    return f"failed: {type(error).__name__}: {error}"


#: Characters of an ``"id,id,…"`` string parsed per slice (:func:`~mockoss.harmony.encoding.id_slices`;
#: ~30,000 ids, ~5 ms): one ``map(int, …)`` over a 10 MB prompt's 1.7 million ids holds the GIL
#: ~0.27 s in one C call; between slices a worker thread lets the event loop run.
_IDS_SLICE = 200_000


def _prompt_text(ids: str) -> str:
    """``load_encoding().decode(ids)`` of ``"id,id,…"``, decoded a slice at a time: one decode of a
    10 MB prompt held the GIL 30-80 ms. ``decode`` is ``bytes.decode("utf-8", errors)`` of the
    tokens' bytes (openai-harmony ``HarmonyEncoding.decode``), and a slice may end inside a
    character's bytes (a rare character is several tokens), so each slice keeps its bytes as
    they are (``surrogateescape``), and the joined text is encoded back to exactly the whole's bytes
    and decoded as ``decode`` does (``replace``): the same text as one decode (PEP 383)."""
    encoding = load_encoding()
    parts = [encoding.decode(part, errors="surrogateescape") for part in id_slices(ids, _IDS_SLICE)]
    return "".join(parts).encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def completion_content(
    upstream: Upstream, endpoint: str, body: Mapping[str, Any], model: str, prompt_ids: str | None = None
) -> bytes:
    """The bytes :func:`ask_upstream` posts: :func:`completion_request` as JSON (``json.dumps``'
    default separators).

    ``prompt_ids``: the prompt's token ids rendered elsewhere, as ``"id,id,…"``
    (:func:`mockoss.server.offload.render_in_worker`, for a big body or a long word, whose render
    holds the GIL for seconds: issue 9 review, eighth session, finding 2), so they are not rendered
    again; ``None``: rendered here. The bytes are the same either way: sent as ids
    (``upstream.prompt == "tokens"``), the string goes into the JSON as it is with ``", "`` between
    ids (what ``json.dumps`` writes for a list of ints, ~15 ms for 1.7 million ids, where building
    the list and dumping it took ~0.4 s holding the GIL); as text, the ids are parsed slice by slice
    (:func:`~mockoss.harmony.encoding.id_slices`) and decoded.

    Raises:
        pydantic.ValidationError: ``body`` is not valid for ``endpoint`` (validate it first).
    """
    if prompt_ids is None:
        return json.dumps(completion_request(upstream, endpoint, body, model)).encode()
    payload = completion_request(upstream, endpoint, body, model, [])
    if upstream.prompt == "text":
        payload["prompt"] = _prompt_text(prompt_ids)
        return json.dumps(payload).encode()
    text = json.dumps(payload)
    hole = text.index('"prompt": []')  # "model" comes first; a quote inside its string is escaped
    return "".join(
        (text[:hole], '"prompt": [', prompt_ids.replace(",", ", "), "]", text[hole + len('"prompt": []') :])
    ).encode()


async def ask_upstream(
    client: httpx2.AsyncClient, upstream: Upstream, headers: Mapping[str, str], content: bytes, threads: DaemonPool
) -> tuple[Step, bool]:
    """Post ``content`` (:func:`completion_content`) to ``upstream``'s ``/v1/completions`` and
    return the step that answers it: the :class:`~mockoss.harmony.Completion`, or a 502
    :func:`failure` (never raises for the upstream's faults: unreachable, timed out, non-200 with
    an excerpt of its body, a 404 with the hint that helps: :func:`_not_found`, unreadable); and whether the answer was heavy (below), so that the
    caller surfaces its reply off the loop too without checking its text again
    (:class:`mockoss.upstream.proxy.Proxy`).

    A heavy answer (:func:`mockoss.server.offload.is_heavy` of its bytes: 256 KiB or more, or a
    long unbroken run of text, which o200k's BPE tokenizes in quadratic time: a 50,000-character
    word held the GIL ~0.9 s) is read on a worker thread of ``threads`` (the app's
    :class:`~mockoss.server.offload.Gate` pool: daemon threads, which a stopping server does not
    wait for; issue 9, the eleventh session's review, finding 3) and tokenized in the worker process
    (:func:`mockoss.server.offload.encode_in_worker`, the same ids as ``Completion.from_text``),
    so that it does not hold the event loop. Found with the issue 9 review, eighth session, finding 2.
    """
    from mockoss.server.offload import is_heavy

    url = upstream.root + "/v1/completions"
    try:
        answer = await client.post(url, content=content, headers=dict(headers))
    except httpx2.HTTPError as exc:
        return failure(upstream, describe(exc)), False
    if answer.status_code == 200 and is_heavy("", answer.content):
        return await run_off_loop(threads, _answer_step, upstream, answer, True), True
    if answer.status_code == 404:
        return failure(upstream, _not_found(answer.text, content, upstream.model is not None)), False
    return _answer_step(upstream, answer, False), False


def _not_found(text: str, content: bytes, chosen: bool) -> str:
    """The 502 message for the upstream's 404 to ``POST /v1/completions``, quoting ``text`` (its
    body) and naming the model mockoss sent (``content``'s ``"model"``), with the hint that helps:

    * the body names that model (vLLM's ``_check_model``: 404 ``The model `X` does not exist.``, as
      :meth:`mockoss.profiles.vllm.VllmProfile.model_not_found` reproduces; SGLang, TensorRT-LLM
      and OpenAI word it alike, Ollama ``model 'X' not found``, LM Studio ``Model "X" not found``:
      each profile's ``model_not_found``), ``--upstream-model`` unset (``chosen`` false): the
      upstream does not serve the request's model, which raw mode sends unless told, and the
      flag that fixes it is ``--upstream-model NAME`` (the sixteenth session's newcomer, item 3,
      got the 404 wrapped without it);
    * the body names it and ``--upstream-model`` set it (``chosen``): that flag is the one to
      check, against the names the upstream's ``GET /v1/models`` lists; telling the user to set
      the flag they set was no help (the eighteenth session, task C2 item 2);
    * the body does not name it: the route is what is missing (a FastAPI server's ``{"detail":
      "Not Found"}``, Go's ``404 page not found``: ``--upstream`` not the server's root, or a
      server without the completions API), and no model flag would help.
    """
    found = _SENT_MODEL.match(content)
    sent = json.loads(found.group(1)) if found else None
    named = f"model {sent!r}" if isinstance(sent, str) else "the request's model"
    quoted = f"answered HTTP 404 to POST /v1/completions: {text[:EXCERPT_CHARS]}"
    if not isinstance(sent, str) or (sent not in text and json.dumps(sent)[1:-1] not in text):
        return (
            f"{quoted} (mockoss sent {named}, which the answer does not name: is --upstream the server's root URL, "
            "and does the server have POST /v1/completions?)"
        )
    if chosen:
        return f"{quoted} (mockoss sent {named}, as --upstream-model says: the upstream's GET /v1/models lists the names it serves)"
    return f"{quoted} (mockoss sent {named}; to send the name the upstream serves, start mockoss with --upstream-model NAME)"


#: The ``"model"`` string that :func:`completion_content`'s JSON begins with.
_SENT_MODEL = re.compile(rb'\{"model": ("(?:[^"\\]|\\.)*")')


def _answer_step(upstream: Upstream, answer: httpx2.Response, elsewhere: bool) -> Step:
    """The step of the upstream's ``/v1/completions`` ``answer`` (see :func:`ask_upstream`), its
    text tokenized in the worker process if ``elsewhere`` (in process if that fails)."""
    text = answer.text
    if answer.status_code != 200:
        return failure(upstream, f"answered HTTP {answer.status_code} to POST /v1/completions: {text[:EXCERPT_CHARS]}")
    try:
        harmony = completion_text(json.loads(text))
        completion = _elsewhere(harmony) if elsewhere else None
        if completion is None:
            completion = Completion.from_text(harmony)
    except ValueError as exc:  # not JSON, or not a completions answer (or text the tokenizer refuses)
        return failure(upstream, f"sent an unreadable /v1/completions answer ({exc}): {text[:EXCERPT_CHARS]}")
    completion._memo[ROUNDTRIP_KEY] = True  # made from its text: recorded as `completion: {raw: …}`
    return Step(index=0, completion=completion, error=None)


def _elsewhere(text: str) -> Completion | None:
    """``Completion.from_text(text)`` with ``text`` tokenized in the worker process (the same ids:
    ``encode(text, allowed_special="all")``); ``None`` if the worker cannot be used or encoding
    raised there (the caller tokenizes in process, which raises the same).

    Raises:
        PanicException: the tokenizer panicked there (as it would here)."""
    from mockoss.server.offload import encode_in_worker

    ids = encode_in_worker(text, True)
    return None if ids is None else Completion(text=text, tokens=tuple(ids))
