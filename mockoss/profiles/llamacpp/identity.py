"""llama-server's identity and health routes, and its answer to unknown routes.

Sources (ggml-org/llama.cpp): ``tools/server/server-context.cpp@001d906a`` (``get_health`` →
``{"status":"ok"}``; ``get_res_models`` for ``GET /models`` and ``GET /v1/models``;
``get_res_props`` for ``GET /props``), ``tools/server/server.cpp`` (routes: ``/health``,
``/v1/health``, ``/props``, ``/models``, ``/v1/models``, …) and the cpp-httplib error handler
(any unmatched method or path → 404 ``{"error":{"code":404,"message":"File Not Found",
"type":"not_found_error"}}``).

The model metadata (``meta``) and the sampling defaults under ``/props`` are those of a gpt-oss-20b
MXFP4 GGUF on a default llama-server; they are plausible constants, not measured (unverified).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mockoss.profiles.base import Reply, ServerInfo
from mockoss.profiles.llamacpp.wire import dumps, error_reply

if TYPE_CHECKING:
    from mockoss.profiles.llamacpp import LlamacppProfile

__all__ = ["HEALTH_PATHS", "MODELS_PATHS", "probe", "route_error"]

HEALTH_PATHS = frozenset({"/health", "/v1/health"})
MODELS_PATHS = frozenset({"/models", "/v1/models"})

#: ``meta`` of ``GET /v1/models`` for gpt-oss-20b (MXFP4 GGUF), unverified constants.
MODEL_META = {
    "vocab_type": 2,
    "n_vocab": 201088,
    "n_ctx_train": 131072,
    "n_embd": 2880,
    "n_params": 20914757184,
    "size": 12109566560,
    "ftype": "MXFP4 MoE",
}

#: ``task_params::to_json(only_metrics=true)`` with llama-server's default sampling settings.
_DEFAULT_PARAMS: dict[str, Any] = {
    "seed": 4294967295, "temperature": 0.8, "dynatemp_range": 0.0, "dynatemp_exponent": 1.0,
    "top_k": 40, "top_p": 0.95, "min_p": 0.05, "top_n_sigma": -1.0, "xtc_probability": 0.0,
    "xtc_threshold": 0.1, "typical_p": 1.0, "repeat_last_n": 64, "repeat_penalty": 1.0,
    "presence_penalty": 0.0, "frequency_penalty": 0.0, "dry_multiplier": 0.0, "dry_base": 1.75,
    "dry_allowed_length": 2, "dry_penalty_last_n": -1, "mirostat": 0, "mirostat_tau": 5.0,
    "mirostat_eta": 0.1, "max_tokens": -1, "n_predict": -1, "n_keep": 0, "n_discard": 0,
    "ignore_eos": False, "stream": True, "n_probs": 0, "min_keep": 0,
    "chat_format": "Content-only", "reasoning_format": "auto", "reasoning_in_content": False,
    "thinking_forced_open": False,
    "samplers": ["penalties", "dry", "top_n_sigma", "top_k", "typ_p", "top_p", "min_p", "xtc", "temperature"],
    "speculative.n_max": 16, "speculative.n_min": 0, "speculative.p_min": 0.75,
    "timings_per_token": False, "post_sampling_probs": False, "lora": [],
}


def _json(value: Any) -> Reply:
    return Reply(status=200, body=dumps(value).encode())


def _models(profile: LlamacppProfile, info: ServerInfo) -> dict[str, Any]:
    name = info.served_model_names[0]
    meta = {"n_ctx": profile.n_ctx, **MODEL_META}
    ordered = {k: meta[k] for k in ("vocab_type", "n_vocab", "n_ctx", "n_ctx_train", "n_embd", "n_params", "size", "ftype")}
    model = {
        "name": name, "model": name, "modified_at": "", "size": "", "digest": "", "type": "model",
        "description": "", "tags": [""], "capabilities": ["completion"], "parameters": "",
        "details": {"parent_model": "", "format": "gguf", "family": "", "families": [""], "parameter_size": "", "quantization_level": ""},
    }
    data = {
        "id": name, "aliases": list(info.served_model_names[1:]), "tags": [], "object": "model",
        "created": info.created, "owned_by": "llamacpp", "meta": ordered,
    }
    return {"models": [model], "object": "list", "data": [data]}


def _props(profile: LlamacppProfile, info: ServerInfo) -> dict[str, Any]:
    params = {**_DEFAULT_PARAMS, "reasoning_format": profile.reasoning_format}
    return {
        "default_generation_settings": {"params": params, "n_ctx": profile.n_ctx},
        "total_slots": 1,
        "model_alias": info.served_model_names[0],
        "model_ftype": MODEL_META["ftype"],
        "model_path": profile.model_path,
        "modalities": {"vision": False, "video": False, "audio": False},
        "media_marker": "<__media__>",
        "endpoint_slots": True,
        "endpoint_props": False,
        "endpoint_metrics": False,
        "ui": True,
        "ui_settings": {},
        "chat_template": "{#- mockoss: the gpt-oss chat template is not reproduced -#}",
        "chat_template_caps": {"supports_tools": True, "supports_tool_calls": True, "supports_system_role": True},
        "bos_token": "<|startoftext|>",
        "eos_token": "<|return|>",
        "build_info": profile.build_info,
        "is_sleeping": False,
        "cors_proxy_enabled": False,
    }


def probe(profile: LlamacppProfile, method: str, path: str, info: ServerInfo) -> Reply | None:
    """``GET /health`` and ``/v1/health`` → ``{"status":"ok"}``; ``GET /models`` and ``/v1/models``
    → ``{"models":[…Ollama-style entry…],"object":"list","data":[{"id","aliases","tags",
    "object":"model","created","owned_by":"llamacpp","meta":{…}}]}``; ``GET /props`` → server
    properties (``default_generation_settings``, ``total_slots``, ``model_alias``, ``model_path``,
    ``chat_template``, ``build_info``, …). Anything else → ``None``."""
    if method != "GET":
        return None
    if path in HEALTH_PATHS:
        return _json({"status": "ok"})
    if path in MODELS_PATHS:
        return _json(_models(profile, info))
    if path == "/props":
        return _json(_props(profile, info))
    return None


def route_error(status: int, method: str, path: str) -> Reply:
    """cpp-httplib answers an unknown path, and a known path with the wrong method, with 404
    ``{"error":{"code":404,"message":"File Not Found","type":"not_found_error"}}``."""
    return error_reply(404, "File Not Found")
