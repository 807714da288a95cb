"""llama-server's side routes: ``/slots``, ``/metrics``, ``/tokenize``, ``/detokenize``, ``/apply-template``.

Routes as ``tools/server/server.cpp`` registers them (ggml-org/llama.cpp@00dd0816, read through the
code index): ``GET /slots``, ``GET /metrics``, ``POST /tokenize``, ``POST /detokenize``,
``POST /apply-template``; an ``std::invalid_argument`` is HTTP 400 ``invalid_request_error``,
any other exception 500 (``ex_wrapper``). That ``server.cpp`` registers no ``/v1/props``
(only ``/props``), so ``GET /v1/props`` stays a 404 ``File Not Found``; some forked builds add it.

* ``/tokenize`` ``{"content", "add_special", "parse_special", "with_pieces"}`` →
  ``{"tokens": [ids]}`` or, with ``with_pieces``, ``{"tokens": [{"id", "piece"}]}`` (a piece that
  is not valid UTF-8 is given as its bytes, ``[b0, b1, …]``, as llama-server does). gpt-oss's vocab
  has no BOS, so ``add_special`` adds nothing; ``parse_special`` (default true) reads special
  token text as special tokens.
* ``/detokenize`` ``{"tokens"}`` → ``{"content": text}``.
* ``/apply-template`` ``{"messages", …}`` → ``{"prompt": text}``: the prompt as mockoss renders it
  (openai-harmony, the Harmony layout the gpt-oss template writes); llama-server renders its Jinja
  template, so the text may differ in details such as the date line (unverified byte for byte).
  Messages the template refuses are its HTTP 500, as on the chat route
  (:meth:`~mockoss.profiles.llamacpp.LlamacppProfile.template_refusal`; the route renders the
  template through ``common_chat_templates_apply``, ``handle_apply_template``).
* ``/slots`` → one idle slot (``total_slots`` 1 in ``/props``); field set unverified.
* ``/metrics`` → 501 ``This server does not support metrics endpoint. Start it with `--metrics``
  (``endpoint_metrics`` is false in ``/props``: the default server).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from mockoss.profiles.base import Reply, ServerInfo
from mockoss.profiles.llamacpp.wire import dumps, error_reply

if TYPE_CHECKING:
    from mockoss.profiles.llamacpp import LlamacppProfile

__all__ = ["side_route"]

METRICS_DISABLED = "This server does not support metrics endpoint. Start it with `--metrics`"


def _json(value: Any) -> Reply:
    return Reply(status=200, body=dumps(value).encode())


def _pieces(tokens: list[int]) -> list[dict[str, Any]]:
    """``{"id", "piece"}`` per token: its bytes as text, or as ``[b0, b1, …]`` when they are not
    valid UTF-8 alone. All tokens decoded at once and cut per token
    (:func:`mockoss.harmony.encoding.token_spans`; one openai-harmony call a token took ~5 us:
    36,000 words held the event loop 266 ms, issue 9, the breaker's finding 8)."""
    from mockoss.harmony.encoding import token_spans

    data, ends = token_spans(tokens)
    pieces = []
    for token, start, end in zip(tokens, [0, *ends], ends):
        raw = data[start:end]
        try:
            piece: str | list[int] = raw.decode("utf-8")
        except UnicodeDecodeError:
            piece = list(raw)
        pieces.append({"id": token, "piece": piece})
    return pieces


#: Items a call of the JSON encoder writes in :func:`_dumps_sliced`.
_SLICE = 4096


def _dumps_sliced(items: list[Any]) -> str:
    """``dumps(items)``, the C encoder called on :data:`_SLICE` items at a time: one call holds
    the GIL to its end, and 107,000 pieces took 50-90 ms (on a worker thread, every other client
    waited as long). Compact JSON, so the slices joined by commas are the same text."""
    return "[" + ",".join(dumps(items[start : start + _SLICE])[1:-1] for start in range(0, len(items), _SLICE)) + "]"


def _tokenize(body: dict[str, Any]) -> Reply:
    from mockoss.harmony.encoding import encode_text

    content = body.get("content")
    if not isinstance(content, str):
        return _json({"tokens": []}) if content is None else error_reply(400, "\"content\" must be a string")
    special = body.get("parse_special", True)
    tokens = encode_text(content, special=bool(special))  # in the worker process for a long word (mockoss.server.offload)
    if body.get("with_pieces"):  # dumps({"tokens": pieces}), the encoder called per slice
        return Reply(status=200, body=('{"tokens":' + _dumps_sliced(_pieces(tokens)) + "}").encode())
    return _json({"tokens": list(tokens)})


def _detokenize(body: dict[str, Any]) -> Reply:
    from mockoss.harmony.encoding import load_encoding

    tokens = body.get("tokens", [])
    if not isinstance(tokens, list) or not all(isinstance(t, int) and not isinstance(t, bool) and 0 <= t < 201088 for t in tokens):
        return error_reply(400, "\"tokens\" must be an array of valid token ids")
    return _json({"content": load_encoding().decode(tokens) if tokens else ""})


def _apply_template(profile: LlamacppProfile, body: dict[str, Any], raw: bytes) -> Reply:
    from mockoss.harmony.encoding import ids_from_text, load_encoding, render_elsewhere
    from mockoss.harmony.prompt import render_chat_prompt
    from mockoss.profiles.llamacpp.refusals import chat_refusal

    # post_apply_template is oaicompat_chat_params_parse without the inference: every refusal of
    # the chat route's parse is its own (Telosnex/fllama@1d28604d's vendored server-context.cpp)
    if (refused := chat_refusal(profile, body)) is not None:
        return error_reply(*refused)
    # In the worker process for a big or many-message body (mockoss.server.offload), which
    # answers "id,id,…": the chat endpoint's render_prompt is this render_chat_prompt(body).
    joined = render_elsewhere("chat", raw) if raw else None
    tokens = render_chat_prompt(body) if joined is None else ids_from_text(joined)
    return _json({"prompt": load_encoding().decode(tokens)})


def _slots(profile: LlamacppProfile) -> Reply:
    from mockoss.profiles.llamacpp.identity import _DEFAULT_PARAMS

    slot = {
        "id": 0, "id_task": -1, "n_ctx": profile.n_ctx, "speculative": False, "is_processing": False,
        "params": {**_DEFAULT_PARAMS, "reasoning_format": profile.reasoning_format},
        "next_token": [{"has_next_token": False, "has_new_line": False, "n_remain": -1, "n_decoded": 0}],
    }
    return _json([slot])


def side_route(profile: LlamacppProfile, method: str, path: str, raw: bytes, info: ServerInfo) -> Reply | None:
    """The routes of the module docstring, else ``None`` (the caller answers 404)."""
    if method == "GET" and path == "/slots":
        return _slots(profile)
    if method == "GET" and path == "/metrics":
        return error_reply(501, METRICS_DISABLED)
    if method != "POST" or path not in ("/tokenize", "/detokenize", "/apply-template"):
        return None
    try:
        body = json.loads(raw) if raw else {}
    except (ValueError, RecursionError) as exc:
        return error_reply(400, f"[json.exception.parse_error.101] parse error: {exc}")
    if not isinstance(body, dict):
        return error_reply(400, "the request body must be a JSON object")
    if path == "/tokenize":
        return _tokenize(body)
    if path == "/detokenize":
        return _detokenize(body)
    return _apply_template(profile, body, raw)
