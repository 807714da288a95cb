#!/usr/bin/env python
"""The SGLang half of ``tools/goldens/sglang_serving_code.py``: SGLang 0.5.23's own HTTP app and
serving classes in process, the engine (``TokenizerManager``) replaced by scripted tokens.

Run by that generator in a virtual environment holding SGLang (it never imports mockoss: SGLang
pins openai-harmony 0.0.4, mockoss runs oss-harmony; both install the module ``openai_harmony``)::

    SGLANG_PYTHON tools/goldens/sglang_serving_engine.py PLAN.json OUT.json

The plan is ``{"tokenizer_dir", "chat_template", "cases": [...]}``: a Hugging Face tokenizer
directory for o200k_harmony (:mod:`mockoss.engines.vllm.model_dir`'s), the gpt-oss model's chat
template file, and per exchange ``{"path", "body", "tokens", "length"}``: ``tokens`` the ids the
engine emits, ``length`` whether generation stopped at the token limit. The request is posted to
``sglang.srt.entrypoints.http_server.app`` (FastAPI, through httpx's ASGI transport), whose routes
run ``OpenAIServingChat`` and ``OpenAIServingResponses`` (``srt/entrypoints/openai/serving_chat.py``,
``serving_responses.py``) unchanged, with ``--reasoning-parser gpt-oss --tool-call-parser gpt-oss``.
What stands in (sgl-project/sglang v0.5.23, the package-index wheel; paths under ``python/sglang/``):

* the model's tokenizer: ``PreTrainedTokenizerFast`` over the plan's ``tokenizer.json`` (o200k_base
  plus the o200k_harmony special tokens) with the plan's chat template, which SGLang's own
  ``TemplateManager.initialize_templates`` (``srt/parser/template_manager.py``) loads and inspects
  (content format, ``detect_reasoning_pattern``) as at start-up, and ``_apply_jinja_template``
  renders (so chat ``prompt_tokens`` is SGLang's count);
* the engine, ``TokenizerManager.generate_request``: it yields what the real one yields
  (``srt/managers/tokenizer_manager.py``, ``_handle_batch_output``): per step when streamed
  (``--stream-interval 1``), once when not, cumulative ``text`` and ``output_ids`` and a
  ``meta_info`` with ``id``, ``finish_reason`` (``{"type": "stop", "matched": id}``, ``matched``
  null when the script ends without a stop token, or ``{"type": "length", "length": n}``),
  ``prompt_tokens``, ``completion_tokens``, ``cached_tokens`` 0, ``weight_version`` ``"default"``
  and ``reasoning_tokens``. The text is made by SGLang's own ``DetokenizerManager.
  _decode_batch_token_id_output`` (``srt/managers/detokenizer_manager.py``: incremental decoding,
  ``trim_matched_stop``) over o200k_harmony's decode; ``reasoning_tokens`` by SGLang's own
  ``Req.update_reasoning_tokens`` (``srt/managers/schedule_batch.py:2240``), called per token as
  ``batch_result_processor.py:1496`` (``_maybe_update_reasoning_tokens``) does, with the request's
  ``require_reasoning`` and ``think_end_ids`` = the gpt-oss reasoning detector's
  ``get_think_end_token_ids`` (``<|end|>``, as ``srt/managers/scheduler.py:946`` sets them);
* ``torchvision``, imported by multimodal config modules only, is a stub (its CUDA wheel does not
  load next to CPU torch).

No sampler runs, so a grammar SGLang sets (``tool_choice`` required: ``_process_messages``'
``tool_call_constraint``) does not constrain the scripted tokens. Writes ``[{"status",
"content_type", "body", "abort", "prompt"}]`` (``abort``: an exception raised after the reply
started; ``prompt``: the rendered prompt the engine got, decoded, for reading differences).
"""

from __future__ import annotations

import asyncio
import json
import sys
import types
import uuid
from importlib.machinery import ModuleSpec
from typing import Any
from unittest.mock import MagicMock, Mock

STOPS = {200002, 200012, 199999}
MODEL = "openai/gpt-oss-20b"
FIRST_SPECIAL = 199998


class _StubFinder:
    """Imports ``torchvision`` and its submodules as mocks (only multimodal processors use them)."""

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> ModuleSpec | None:
        if name == "torchvision" or name.startswith("torchvision."):
            return ModuleSpec(name, self, is_package=True)
        return None

    def create_module(self, spec: ModuleSpec) -> Any:
        module = MagicMock(name=spec.name)
        module.__path__, module.__spec__, module.__version__ = [], spec, "0.0.0"
        return module

    def exec_module(self, module: Any) -> None:
        pass


def _boot() -> Any:
    sys.meta_path.insert(0, _StubFinder())
    from sglang.test.test_utils import maybe_stub_sgl_kernel

    maybe_stub_sgl_kernel()
    from sglang.srt.runtime_context import publish
    from sglang.srt.server_args import ServerArgs

    publish(ServerArgs(model_path="dummy"), role="tokenizer")
    import sglang.srt.entrypoints.http_server as hs

    return hs


def main() -> int:
    plan_path, out_path = sys.argv[1:3]
    with open(plan_path, encoding="utf-8") as f:
        plan = json.load(f)
    hs = _boot()
    import httpx
    from openai_harmony import HarmonyEncodingName, load_harmony_encoding
    from sglang.srt.entrypoints.openai.serving_chat import OpenAIServingChat
    from sglang.srt.entrypoints.openai.serving_responses import OpenAIServingResponses
    from sglang.srt.managers.detokenizer_manager import DetokenizerManager
    from sglang.srt.managers.schedule_batch import Req
    from sglang.srt.parser.reasoning_parser import ReasoningParser
    from sglang.srt.parser.template_manager import TemplateManager
    from transformers import PreTrainedTokenizerFast

    enc = load_harmony_encoding(HarmonyEncodingName.HARMONY_GPT_OSS)

    class Tokenizer:
        """o200k_harmony as the tokenizer: decode (bytes as UTF-8 with U+FFFD) and encode (special tokens allowed)."""

        chat_template = None

        def decode(
            self, ids: list[int], skip_special_tokens: bool = True, spaces_between_special_tokens: bool = True
        ) -> str:
            kept = [t for t in ids if not (skip_special_tokens and t >= FIRST_SPECIAL)]
            return enc.decode(kept) if kept else ""

        def encode(self, text: str, add_special_tokens: bool = False) -> list[int]:
            return enc.encode(text, allowed_special="all")

    tokenizer = Tokenizer()
    model_tokenizer = PreTrainedTokenizerFast.from_pretrained(plan["tokenizer_dir"])
    with open(plan["chat_template"], encoding="utf-8") as f:
        model_tokenizer.chat_template = f.read()
    detector = ReasoningParser(model_type="gpt-oss", stream_reasoning=False, tokenizer=model_tokenizer).detector
    think_end_ids = detector.get_think_end_token_ids(model_tokenizer)  # scheduler.py:946

    def detokenizer() -> Any:
        """``DetokenizerManager``'s incremental decoding without its process (per-request state)."""
        detok = object.__new__(DetokenizerManager)
        detok.decode_status, detok.vocab_size, detok.tokenizer = {}, None, tokenizer
        detok.disable_tokenizer_batch_decode = True
        detok.is_tool_call_parser_gpt_oss = True
        detok.tool_close_token_ids = frozenset()
        return detok

    def decode_step(detok: Any, rid: str, new_ids: list[int], finish: Any, params: dict[str, Any]) -> str:
        batch = types.SimpleNamespace(
            rids=[rid],
            decode_ids=[list(new_ids)],
            decoded_texts=[""],
            read_offsets=[0],
            finished_reasons=[finish],
            no_stop_trim=[bool(params.get("no_stop_trim"))],
            skip_special_tokens=[params.get("skip_special_tokens", True)],
            spaces_between_special_tokens=[True],
        )
        return detok._decode_batch_token_id_output(batch)[0]

    def reasoning_counter(require_reasoning: bool) -> Any:
        """A stand-in ``Req`` whose ``update_reasoning_tokens`` is SGLang's own."""
        req = types.SimpleNamespace(
            reasoning_tokens=0, _is_reasoning_over=False, _think_end_matcher=None, _think_end_match_len=0
        )

        def count(token: int) -> None:
            if require_reasoning and think_end_ids:  # batch_result_processor.py:1496-1522
                Req.update_reasoning_tokens(req, token, think_end_ids)

        return req, count

    class Engine:
        """``TokenizerManager`` as the serving classes use it, replaying one scripted completion."""

        served_model_name = MODEL

        def __init__(self, case: dict[str, Any]) -> None:
            self.case = case
            self.model_config = Mock(is_multimodal=False, context_len=131072)
            self.model_config.get_default_sampling_params.return_value = {}
            self.model_config.hf_config = Mock(model_type="gpt_oss", architectures=["GptOssForCausalLM"])
            self.lora_registry = None
            self.server_args = Mock(
                enable_cache_report=False,
                reasoning_parser="gpt-oss",
                tool_call_parser="gpt-oss",
                stream_response_default_include_usage=False,
                tokenizer_metrics_allowed_custom_labels=None,
                incremental_streaming_output=False,
            )
            self.tokenizer, self.processor = model_tokenizer, None
            self.num_reserved_tokens = 0
            self.request_logger = Mock(log_requests=False)
            self.create_abort_task = Mock(return_value=None)
            self.tool_call_parser = "gpt-oss"

        def config_value(self, name: str) -> Any:
            return getattr(self.server_args, name)

        def _prompt_len(self, obj: Any) -> int:
            if obj.input_ids is not None:
                return len(obj.input_ids)
            text = obj.text if isinstance(obj.text, str) else obj.text[0]
            return len(enc.encode(text, allowed_special="all"))

        async def generate_request(self, obj: Any, raw: Any = None):
            tokens, length = list(self.case["tokens"]), bool(self.case["length"])
            params = obj.sampling_params or {}
            rid = obj.rid if isinstance(obj.rid, str) else uuid.uuid4().hex
            n, prompt = len(tokens), self._prompt_len(obj)
            self.prompt_ids = list(obj.input_ids) if obj.input_ids is not None else None
            last = tokens[-1] if tokens else None
            finish = (
                {"type": "length", "length": n}
                if length
                else {"type": "stop", "matched": last if last in STOPS else None}
            )
            detok, text = detokenizer(), ""
            req, count = reasoning_counter(bool(getattr(obj, "require_reasoning", False)))

            def out(k: int, start: int) -> dict[str, Any]:
                nonlocal text
                done = k == n
                for token in tokens[start:k]:
                    count(token)
                text += decode_step(detok, rid, tokens[start:k], finish if done else None, params)
                meta = {
                    "id": rid,
                    "finish_reason": finish if done else None,
                    "prompt_tokens": prompt,
                    "weight_version": "default",
                    "num_retractions": 0,
                    "reasoning_tokens": req.reasoning_tokens,
                    "completion_tokens": k,
                    "cached_tokens": 0,
                }
                return {"text": text, "output_ids": list(tokens[:k]), "meta_info": meta}

            if obj.stream:
                for k in range(1, n + 1):
                    yield out(k, k - 1)
            else:
                yield out(n, 0)

    async def run(cases: list[dict[str, Any]]) -> list[dict[str, Any]]:
        results, aborted = [], []

        async def app(scope: Any, receive: Any, send: Any) -> None:
            """SGLang's app, recording an exception that escapes after the reply started."""
            finished = []

            async def tracked(message: Any) -> None:
                finished.append(message.get("type") == "http.response.body" and not message.get("more_body", False))
                await send(message)

            try:
                await hs.app(scope, receive, tracked)
            except Exception as exc:  # noqa: BLE001 - what SGLang's generator raises is the observation
                aborted.append(f"{type(exc).__name__}: {exc}")
                if not any(finished):
                    await send({"type": "http.response.body", "body": b"", "more_body": False})

        async with httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app), base_url="http://sglang", timeout=60
        ) as client:
            # One engine and one set of serving objects for all requests, as in a running server;
            # the engine's script is the current exchange's.
            engine, templates = Engine({}), TemplateManager()
            templates.initialize_templates(engine, model_path=MODEL)  # as at start-up: the model's template
            hs.app.state.openai_serving_responses = OpenAIServingResponses(engine, templates)
            hs.app.state.openai_serving_chat = OpenAIServingChat(engine, templates)
            hs._global_state = types.SimpleNamespace(tokenizer_manager=engine)
            for case in cases:
                engine.case, engine.prompt_ids = case, None
                aborted.clear()
                reply = await client.post(
                    case["path"],
                    content=json.dumps(case["body"]).encode(),
                    headers={"content-type": "application/json"},
                )
                results.append(
                    {
                        "status": reply.status_code,
                        "content_type": reply.headers.get("content-type"),
                        "body": reply.content.decode(),
                        "abort": aborted[0] if aborted else None,
                        "prompt": enc.decode(engine.prompt_ids) if engine.prompt_ids else None,
                    }
                )
        return results

    results = asyncio.run(run(plan["cases"]))
    with open(out_path, "w", encoding="utf-8") as f:
        json.dump(results, f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
