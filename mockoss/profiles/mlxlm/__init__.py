"""Profile ``mlx-lm``: how mlx-lm's OpenAI-compatible server (``mlx_lm.server``) serves gpt-oss.

Source: the mlx-lm 0.32.2 wheel (``pip download --no-deps mlx-lm==0.32.2``), cited as
``ml-explore/mlx-lm@v0.32.2:mlx_lm/<file>``; history read in the GitHub repository.

mlx-lm has no Harmony handling at all. Its reasoning and tool-call support is keyed on markers it
infers from the vocabulary and chat template (``tokenizer_utils.py`` ``_infer_thinking``:
``<think>``, ``<longcat_think>``, ``<|think:start|>``, Gemma's ``<|channel>``, …;
``_infer_tool_parser``: ``<tool_call>``, ``[TOOL_CALLS]``, …), none of which gpt-oss's has
(``<|channel|>`` is not Gemma's ``<|channel>``), and no ``tool_parsers/`` module is for gpt-oss. The
detokenizer keeps special tokens as text. So what the model writes after the prompt's
``<|start|>assistant`` — ``<|channel|>analysis<|message|>…<|end|><|start|>assistant<|channel|>final
<|message|>…`` — is ``content``, verbatim, analysis and all; a tool call is raw markup in ``content``
with ``finish_reason: "stop"`` (``<|call|>`` is an EOS token and is not decoded); no ``reasoning``,
no ``tool_calls``. That is what ml-explore/mlx-lm#875 reports (0.30.6); the fix proposed in
ml-explore/mlx-lm#1867 is unmerged. :mod:`.detokenizer` reproduces the streaming detokenizer,
:mod:`.wire` the JSON.

What was checked against mlx-lm's own code, and how: ``tools/mlxlm_diff.py`` imports mlx-lm
0.32.2's ``server.py`` on Linux (``mlx[cpu]`` in a scratch venv, ``transformers`` stubbed) and
serves its real ``APIHandler`` on loopback, with mlx-lm's ``TokenizerWrapper``,
``BPEStreamingDetokenizer`` (over gpt-oss's byte-level token map rebuilt from o200k_harmony) and
``make_text_state_machine``; only the model is replaced, by a generator replaying the scripted
tokens the way ``stream_generate`` does. Every completion of the built-in scenarios (51) and 400
seeded token sequences (single bytes, byte 0, partial UTF-8, lone spaces, special tokens,
``<|endoftext|>`` mid-stream), with no limit and a 7-token limit, as chat and text completion,
streamed and not: 3,608 replies, byte for byte (ids and ``created`` normalised), 0 differ; the
same against the 0.32.0 and 0.32.1 wheels (the timeline, :mod:`.releases`). 0.32.2's 408 replies
to the scenario completions are goldens (``--record``, ``tests/golden/mlx-lm-0.32.2/``) that
``tests/golden/test_mlxlm_goldens.py`` replays against ``MockServer`` in CI, where mlx is absent. Also
checked so: mlx-lm infers no reasoning or tool markers from gpt-oss's vocabulary. Read, not run:
the model-loading path (its 404), ``/v1/models`` (a Hugging Face cache scan), ``/health``, the
route errors, and that the EOS set is ``<|return|>``, ``<|endoftext|>``, ``<|call|>`` (gpt-oss's
``generation_config.json``, which mlx-lm's ``load_config`` reads).

Unverified, so switches or stated guesses: that gpt-oss's ``tokenizer.json`` decoder is
``ByteLevel`` (so the BPE detokenizer is chosen: only the streamed chunking depends on it);
``system_fingerprint`` (``"<mlx-lm>-<mlx>-<platform>-<gpu arch>"``, the host's; a switch);
``prompt_tokens`` (mockoss's Harmony rendering, not the model's Jinja template, which can differ by
a few tokens); ``cached_tokens`` is 0 (a cold prompt cache). Not emulated: ``logprobs``, ``stop``
words, ``/chat/completions`` (the alias without ``/v1``), the ``: keepalive`` comments during long
prompts, and loading another model named in ``model`` (the mock answers as the served one).
"""

from __future__ import annotations

import dataclasses
import http
import json
from dataclasses import dataclass
from http.server import DEFAULT_ERROR_MESSAGE
from typing import Any, ClassVar

from mockoss.profiles.base import ChatRequestView, Reply, RequestContext, ServerInfo

__all__ = ["MlxLmProfile"]

_HTML = "text/html;charset=utf-8"


@dataclass(frozen=True, slots=True)
class MlxLmProfile:
    """``mlx_lm.server --model mlx-community/gpt-oss-20b-MXFP4-Q8`` (mlx-lm 0.32.2).

    Attributes:
        max_tokens: ``--max-tokens``, the limit when a request sets none (default 512).
        system_fingerprint: ``get_system_fingerprint()``: mlx-lm version, MLX version,
            ``platform.platform()`` and the GPU architecture (host-specific; unverified value).
        healthy: ``/health`` answers 200 ``{"status": "ok"}``; false gives 503 ``unavailable``.
    """

    #: The model the server was started with, as Hugging Face repo id.
    default_model: ClassVar[str] = "mlx-community/gpt-oss-20b-MXFP4-Q8"
    #: mlx-lm loads whatever ``model`` names (or serves its own for ``default_model``); the mock
    #: does not check it and answers as the served model.
    model_check: ClassVar[bool] = False

    name: str = "mlx-lm"
    endpoints: frozenset[str] = frozenset({"chat", "completions"})
    max_tokens: int = 512
    system_fingerprint: str = "0.32.2-0.32.2-macOS-15.6-arm64-arm-64bit-applegpu_g15s"
    healthy: bool = True

    def __post_init__(self) -> None:
        if isinstance(self.max_tokens, bool) or not isinstance(self.max_tokens, int) or self.max_tokens < 1:
            raise ValueError(f"max_tokens must be a positive integer, got {self.max_tokens!r}")
        if not isinstance(self.system_fingerprint, str):
            raise ValueError(f"system_fingerprint must be a string, got {self.system_fingerprint!r}")  # noqa: TRY004
        if not isinstance(self.healthy, bool):
            raise ValueError(f"healthy must be true or false, got {self.healthy!r}")  # noqa: TRY004

    def with_switches(self, **switches: Any) -> MlxLmProfile:
        """Return a copy with some switches changed (``TypeError`` for an unknown name)."""
        return dataclasses.replace(self, **switches)

    def surface(self, endpoint: str, completion: Any, request: Any, ctx: RequestContext) -> Reply:
        """``chat`` or ``completions``; see :mod:`mockoss.profiles.mlxlm.wire`."""
        from mockoss.profiles.mlxlm.wire import surface

        if endpoint not in self.endpoints:
            raise ValueError(f"profile mlx-lm does not serve endpoint {endpoint!r}")
        return surface(self, "chat" if endpoint == "chat" else "text", completion, request, ctx)

    def chat(self, completion: Any, request: ChatRequestView, ctx: RequestContext) -> Reply:
        """``POST /v1/chat/completions``, streamed or not."""
        return self.surface("chat", completion, request, ctx)

    def error(self, status: int, message: str, *, param: str | None = None) -> Reply:
        """mlx-lm's error body, ``{"error": "<message>"}`` (server.py ``do_POST``): 400 for bad JSON,
        a non-object body, a parameter ``_validate`` refuses or a missing ``messages``/``prompt``
        (an ``AssertionError``'s text), 404 when loading the requested model fails. ``param`` is
        not part of it. The wording of a validation message is mockoss's."""
        return Reply(status=status, body=json.dumps({"error": message}).encode())

    def model_not_found(self, model: str) -> Reply:
        """Not used (``model_check`` is false); what a failed model load gives: 404 ``{"error"}``."""
        return self.error(404, f"Repository Not Found for url: https://huggingface.co/api/models/{model}/revision/main.")

    def probe(self, method: str, path: str, info: ServerInfo) -> Reply | None:
        """``GET /health`` (``{"status": "ok"}``, 503 ``unavailable`` when unhealthy) and
        ``GET /v1/models[/<repo id>]``: ``{"object": "list", "data": [{"id", "object": "model",
        "created"}]}`` (server.py ``handle_models_request``; the real server lists the MLX models in
        the Hugging Face cache, here the served names)."""
        if method != "GET":
            return None
        if path == "/health":
            body = json.dumps({"status": "ok" if self.healthy else "unavailable"}).encode()
            return Reply(status=200 if self.healthy else 503, body=body)
        if path.startswith("/v1/models"):
            wanted = "/".join(path.split("/")[3:]) or None
            data = [{"id": n, "object": "model", "created": info.created} for n in info.served_model_names if wanted in (None, n)]
            return Reply(status=200, body=json.dumps({"object": "list", "data": data}).encode())
        return None

    def route_error(self, status: int, method: str, path: str) -> Reply:
        """An unknown path, or GET on a POST route: 404 with the bare text ``Not Found`` (labelled
        ``application/json``, server.py ``do_GET``/``do_POST``). Other methods have no handler:
        ``http.server``'s own 501 HTML page (``Unsupported method``)."""
        if method in ("GET", "POST"):
            return Reply(status=404, body=b"Not Found")
        explain = http.HTTPStatus(501).description
        page = DEFAULT_ERROR_MESSAGE % {"code": 501, "message": f"Unsupported method ({method!r})", "explain": explain}
        return Reply(status=501, media_type=_HTML, body=page.encode("utf-8", "replace"))
