"""SGLang's own HTTP app and serving classes with the engine replaced by scripted tokens; the
SGLang half of ``tools/sglang_serving_diff.py`` (run in a scratch venv that has SGLang's
dependencies; it never imports mockoss, whose Harmony library differs from the one SGLang pins).

Usage: ``python tools/sglang_serving_side.py SGLANG_SRC PLAN.json OUT.json``. ``SGLANG_SRC`` holds the
unzipped ``sglang/`` package of the wheel (``pip download --no-deps sglang==0.5.23``; an empty
``sglang/kernels/jit/include`` directory must exist, the wheel leaves it out). Each case of the plan
is ``{"path", "body", "tokens": [[[...], length], ...], "tool_call_parser", "reasoning_parser", "prompt_tokens"}``: the request is posted to
``sglang.srt.entrypoints.http_server.app`` (FastAPI, in process through httpx's ASGI transport),
whose ``/v1/responses``, ``/v1/completions`` and ``/v1/chat/completions`` routes run
``OpenAIServingResponses``, ``OpenAIServingCompletion`` and ``OpenAIServingChat`` unchanged except
for the chat template's rendering (``_apply_jinja_template``: a real model's tokenizer), which
returns ``prompt_tokens`` ids from the plan. What stands in for the engine (``TokenizerManager``):
``generate_request`` replays one token list per call as the scheduler and detokenizer would hand it
over (read from ``managers/tokenizer_manager.py``, ``scheduler_components/output_streamer.py``,
``detokenizer_manager.py``): output ids up to and with the stop token, ``finish_reason``
``{"type":"stop","matched":id}`` (``matched`` null when the script ends without a stop token) or
``{"type":"length","length":n}``, cumulative ``output_ids`` and
``text`` per step when streamed (``--stream-interval 1``, no ``--incremental-streaming-output``),
the text made by SGLang's own ``DetokenizerManager._decode_batch_token_id_output`` (incremental
decoding, a cut character's printable prefix, ``trim_matched_stop``: the matched stop token dropped,
kept for ``<|call|>`` with ``--tool-call-parser gpt-oss``) over o200k_harmony's decode with
``skip_special_tokens`` as the request's sampling parameters say, the request id ``uuid4().hex``
when the request gives none. Writes ``[{"status", "content_type", "body"}]``.
"""

from __future__ import annotations

import asyncio
import json
import sys
import types
import uuid
from typing import Any
from unittest.mock import Mock

STOPS = {200002, 200012, 199999}
MODEL = "openai/gpt-oss-20b"


def main() -> int:
    src, plan_path, out_path = sys.argv[1:4]
    sys.path.insert(0, src)
    from sglang.test.test_utils import maybe_stub_sgl_kernel

    maybe_stub_sgl_kernel()
    from sglang.srt.runtime_context import publish
    from sglang.srt.server_args import ServerArgs

    publish(ServerArgs(model_path="dummy"), role="tokenizer")
    import httpx
    import sglang.srt.entrypoints.http_server as hs
    from openai_harmony import HarmonyEncodingName, load_harmony_encoding
    from sglang.srt.entrypoints.openai.protocol import MessageProcessingResult
    from sglang.srt.entrypoints.openai.serving_chat import OpenAIServingChat
    from sglang.srt.entrypoints.openai.serving_completions import OpenAIServingCompletion
    from sglang.srt.entrypoints.openai.serving_responses import OpenAIServingResponses

    enc = load_harmony_encoding(HarmonyEncodingName.HARMONY_GPT_OSS)
    first_special = 199998

    from sglang.srt.managers.detokenizer_manager import DetokenizerManager

    class Tokenizer:
        """What the detokenizer and the echo of a token prompt call: o200k_harmony's decode (bytes
        as UTF-8 with U+FFFD)."""

        chat_template = None

        def decode(self, ids: list[int], skip_special_tokens: bool = True, spaces_between_special_tokens: bool = True) -> str:
            kept = [t for t in ids if not (skip_special_tokens and t >= first_special)]
            return enc.decode(kept) if kept else ""

    def detokenizer(tool_call_parser: str | None) -> Any:
        """SGLang's own ``DetokenizerManager`` incremental decoding (``_decode_batch_token_id_output``,
        ``trim_matched_stop``) without its process: per-request state, no batch decode."""
        detok = object.__new__(DetokenizerManager)
        detok.decode_status, detok.vocab_size, detok.tokenizer = {}, None, Tokenizer()
        detok.disable_tokenizer_batch_decode = True
        detok.is_tool_call_parser_gpt_oss = tool_call_parser == "gpt-oss"
        detok.tool_close_token_ids = frozenset()  # tool_close_token_ids(): none for the gpt-oss detector
        return detok

    def step(detok: Any, rid: str, new_ids: list[int], finish: Any, params: dict[str, Any]) -> str:
        batch = types.SimpleNamespace(
            rids=[rid], decode_ids=[list(new_ids)], decoded_texts=[""], read_offsets=[0], finished_reasons=[finish],
            no_stop_trim=[bool(params.get("no_stop_trim"))], skip_special_tokens=[params.get("skip_special_tokens", True)],
            spaces_between_special_tokens=[True],
        )
        return detok._decode_batch_token_id_output(batch)[0]

    class Engine:
        """``TokenizerManager`` as the serving classes use it, replaying scripted tokens."""

        served_model_name = MODEL

        def __init__(self, calls: list[list[int]], tool_call_parser: str | None, reasoning_parser: str | None) -> None:
            self.calls = list(calls)
            self.model_config = Mock(is_multimodal=False, context_len=131072)
            self.model_config.get_default_sampling_params.return_value = {}
            self.model_config.hf_config = Mock(model_type="gpt_oss", architectures=["GptOssForCausalLM"])
            self.lora_registry = None
            self.server_args = Mock(
                enable_cache_report=False, reasoning_parser=reasoning_parser, tool_call_parser=tool_call_parser,
                stream_response_default_include_usage=False, tokenizer_metrics_allowed_custom_labels=None,
                incremental_streaming_output=False,
            )
            self.tokenizer = Tokenizer()
            self.num_reserved_tokens = 0
            self.request_logger = Mock(log_requests=False)
            self.create_abort_task = Mock(return_value=None)  # no background abort task
            self.tool_call_parser = tool_call_parser

        def config_value(self, name: str) -> Any:
            return getattr(self.server_args, name)

        def _prompt_len(self, obj: Any) -> int:
            if obj.input_ids is not None:
                return len(obj.input_ids)
            text = obj.text if isinstance(obj.text, str) else obj.text[0]
            return len(enc.encode(text, allowed_special="all"))

        async def generate_request(self, obj: Any, raw: Any = None):
            tokens, length = self.calls.pop(0)
            params = obj.sampling_params or {}
            rid = obj.rid if isinstance(obj.rid, str) else uuid.uuid4().hex
            n, prompt = len(tokens), self._prompt_len(obj)
            last = tokens[-1] if tokens else None
            stopped = last in STOPS and not length
            finish = {"type": "length", "length": n} if length else {"type": "stop", "matched": last if stopped else None}
            detok, text = detokenizer(self.tool_call_parser), ""

            def out(k: int, start: int) -> dict[str, Any]:
                nonlocal text
                done = k == n
                text += step(detok, rid, tokens[start:k], finish if done else None, params)
                meta = {"id": rid, "finish_reason": finish if done else None, "prompt_tokens": prompt, "weight_version": "default",
                        "num_retractions": 0, "reasoning_tokens": 0, "completion_tokens": k, "cached_tokens": 0}
                return {"text": text, "output_ids": list(tokens[:k]), "meta_info": meta}

            if obj.stream:
                for k in range(1, n + 1):
                    yield out(k, k - 1)
            else:
                yield out(n, 0)

    class Templates:
        chat_template_name = jinja_template_content_format = completion_template_name = reasoning_config = python_chat_template = None
        force_reasoning = jinja_template_may_reorder_tool_results = False

    async def run(cases: list[dict[str, Any]]) -> list[dict[str, Any]]:
        results = []
        aborted: list[str] = []

        async def app(scope, receive, send):  # records an exception that escapes after the reply started
            finished = []

            async def tracked(message):
                finished.append(message.get("type") == "http.response.body" and not message.get("more_body", False))
                await send(message)

            try:
                await hs.app(scope, receive, tracked)
            except Exception as exc:  # noqa: BLE001 - any exception SGLang's generator raises is the observation
                aborted.append(f"{type(exc).__name__}: {exc}")
                if not any(finished):
                    await send({"type": "http.response.body", "body": b"", "more_body": False})  # the connection drops here

        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://sglang") as client:
            for case in cases:
                engine = Engine(case["tokens"], case.get("tool_call_parser", "gpt-oss"), case.get("reasoning_parser", "gpt-oss"))
                hs.app.state.openai_serving_responses = OpenAIServingResponses(engine, Templates())
                hs.app.state.openai_serving_completion = OpenAIServingCompletion(engine, Templates())
                chat = OpenAIServingChat(engine, Templates())
                prompt = list(range(case.get("prompt_tokens", 1)))

                def render(*args: Any, _prompt: list[int] = prompt, **kwargs: Any) -> Any:
                    # The chat template (a real model's tokenizer) is the one part stubbed: the
                    # prompt's token count comes from the plan; everything after it runs.
                    return MessageProcessingResult(prompt="", prompt_ids=list(_prompt), image_data=None, audio_data=None,
                                                   video_data=None, modalities=[], stop=[])

                chat._apply_jinja_template = chat._apply_conversation_template = render
                hs.app.state.openai_serving_chat = chat
                aborted.clear()
                hs._global_state = types.SimpleNamespace(tokenizer_manager=engine)  # what /v1/models reads
                if case.get("method") == "GET":
                    reply = await client.get(case["path"])
                else:
                    reply = await client.post(case["path"], content=json.dumps(case["body"]).encode(), headers={"content-type": "application/json"})
                results.append({"status": reply.status_code, "content_type": reply.headers.get("content-type"), "body": reply.content.decode(),
                                "abort": aborted[0] if aborted else None})
        return results

    with open(plan_path) as f:
        cases = json.load(f)
    results = asyncio.run(run(cases))
    with open(out_path, "w") as f:
        json.dump(results, f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
