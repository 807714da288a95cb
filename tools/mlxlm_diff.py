"""Differential check: the ``mlx-lm`` profile against mlx-lm's own server code.

Usage: ``python tools/mlxlm_diff.py /path/to/unzipped/wheel /path/to/transformers-stub`` (the
directory holding ``mlx_lm/`` from ``pip download --no-deps mlx-lm==0.32.2``; a directory with a
``transformers`` stub package exposing ``PreTrainedTokenizerBase``, ``PreTrainedTokenizer``,
``PreTrainedTokenizerFast`` and ``AutoTokenizer.register``, since nothing here loads a Hugging Face
tokenizer). Needs ``mlx[cpu]``, ``numpy`` and ``huggingface_hub`` (a scratch venv, not mockoss's):
``mlx_lm.server`` then imports on Linux. Not imported by mockoss or its tests. Run as::

    /work/mlxlm-venv/bin/python -c "import site, sys, runpy; site.addsitedir('.venv/lib/python3.11/site-packages'); \\
        sys.argv = ['x', '/tmp/mlxlm/src', '/tmp/mlxlm/stubs']; runpy.run_path('tools/mlxlm_diff.py', run_name='__main__')"

What runs as mlx-lm's own code: ``tokenizer_utils.TokenizerWrapper`` and ``BPEStreamingDetokenizer``
(over a stand-in tokenizer whose ``convert_ids_to_tokens`` is gpt-oss's byte-level token map rebuilt
from o200k_harmony), ``generate.make_text_state_machine`` (its inference of reasoning and tool
markers from that vocabulary) and ``server.APIHandler`` itself, served by ``http.server`` on
loopback, writing every byte of every reply. What stands in for mlx-lm: the response generator
(no model): it replays the scripted tokens through mlx-lm's detokenizer the way ``stream_generate``
does (break on an EOS before decoding it, ``finalize`` at the end, ``"stop"``/``"length"``).

For every completion of every built-in scenario and 400 seeded token sequences, under no limit and
a 7-token limit, it sends the chat request and the text completion, streamed and not (streamed chat
with ``include_usage``; streamed text completions with ``stream_options: {}``, which mlx-lm answers
with a stream cut before ``[DONE]``) to both and compares the bytes, ids and ``created`` normalised. Prints the counts and the first
differences; exit status 1 when any differ. Both sides use the profile's default ``system_fingerprint``.

``--record DIR`` (after the two directories) also writes mlx-lm's own replies (the real
``APIHandler``'s bytes, normalised as compared) to every request made for the built-in scenarios'
completions to ``DIR/replies.jsonl.gz``: compact JSON lines, a header (server, release, prompt token
count, fingerprint, normalisation) then one ``{"case": "NAME#STEP", "tokens", "path", "body",
"reply"}`` per request. These are the goldens ``tests/golden/test_mlxlm_goldens.py`` replays in CI
without this venv; re-record after a scenario changes with
``sys.argv = ['x', '/tmp/mlxlm/src', '/tmp/mlxlm/stubs', '--record', 'tests/golden/mlx-lm-0.32.2']``
in the command above.
"""

from __future__ import annotations

import gzip
import json
import random
import re
import sys
import threading
import urllib.error
import urllib.request
from dataclasses import dataclass
from http.server import ThreadingHTTPServer
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from mockoss.endpoints import ENDPOINTS
from mockoss.profiles.base import IdSource, RequestContext
from mockoss.profiles.mlxlm import MlxLmProfile
from mockoss.profiles.mlxlm.detokenizer import token_strings
from mockoss.profiles.mlxlm.wire import EOS
from mockoss.scenario.loader import builtin_names, load_named

PROMPT_TOKENS = 37
SEEDED = 400
_ID = re.compile(rb'"(chatcmpl|cmpl)-[0-9a-f-]{32,36}"')
_CREATED = re.compile(rb'"created": \d+')


class _Tokenizer:
    """The Hugging Face tokenizer's surface that mlx-lm's wrapper and detokenizer touch."""

    chat_template = "{{ messages }}"  # gpt-oss's template holds none of mlx-lm's tool markers
    eos_token_id = 200002

    def __init__(self) -> None:
        self._table = list(token_strings())

    def get_vocab(self) -> dict[str, int]:
        return {t: i for i, t in enumerate(self._table)}

    def convert_ids_to_tokens(self, ids):
        return [self._table[i] for i in ids]

    def encode(self, text, add_special_tokens=False):
        return [0]

    def __len__(self) -> int:
        return len(self._table)

    def apply_chat_template(self, messages, **kwargs):  # never called: the stand-in generator takes no prompt
        raise NotImplementedError


def _theirs_generator(wrapper, gen_mod, server, tokens, finish):
    class Generator:
        cli_args = SimpleNamespace(allowed_origins=["*"], num_draft_tokens=3, max_tokens=512, temp=0.0, top_p=1.0, top_k=0, min_p=0.0, model=None)
        is_healthy = True

        def generate(self, request, args, progress_callback=None):
            ctx = server.GenerationContext(
                has_thinking=wrapper.has_thinking, has_tool_calling=wrapper.has_tool_calling, tool_parser=wrapper.tool_parser,
                text_sm=gen_mod.make_text_state_machine(wrapper, args.stop_words), initial_state="normal",
                prompt=[0] * PROMPT_TOKENS, prompt_cache_count=0,
            )
            return ctx, self._stream(args.max_tokens)

        def _stream(self, limit):
            # stream_generate's loop (generate.py), the model replaced by the scripted tokens
            # (a script that stops without a stop token is followed by <|return|>, as mockoss plays it)
            detok = wrapper.detokenizer
            played = list(tokens) + ([200002] if finish == "stop" and (not tokens or tokens[-1] not in EOS) else [])
            token = None
            for n, token in enumerate(played):
                if token in wrapper.eos_token_ids:
                    break
                detok.add_token(token)
                if n + 1 == limit:
                    break
                yield server.Response(detok.last_segment, token, 0.0, None, ())
            detok.finalize()
            reason = "stop" if token in wrapper.eos_token_ids else "length"
            yield server.Response(detok.last_segment, token, 0.0, reason, ())

    return Generator()


@dataclass(frozen=True)
class _Emission:
    tokens: tuple[int, ...]
    finish_reason: str


class _Seeded:
    """A generated completion (mockoss's ``Completion.emit`` rules: stop after ``<|return|>`` or
    ``<|call|>``, else at the limit), for the detokenizer's corner cases: single bytes (byte 0,
    UTF-8 lead and continuation bytes), the lone-space token, special tokens, any vocabulary id."""

    def __init__(self, tokens: list[int]) -> None:
        self.tokens = tokens

    def emit(self, limit: int | None = None) -> _Emission:
        out: list[int] = []
        for token in self.tokens:
            if limit is not None and len(out) == limit:
                return _Emission(tuple(out), "length")
            out.append(token)
            if token in (200002, 200012):
                break
        return _Emission(tuple(out), "stop")


def _seeded(count: int) -> list[tuple[str, _Seeded]]:
    rng = random.Random(13)
    pool = [*range(300), 220, 220, 220, 200005, 200008, 200006, 200007, 200003, 199999, 200002, 200012]
    out = []
    for i in range(count):
        tokens = [rng.choice(pool) if rng.random() < 0.7 else rng.randrange(0, 199998) for _ in range(rng.randint(1, 24))]
        out.append((f"seeded-{i}", _Seeded(tokens)))
    return out


def _post(port: int, path: str, body: dict) -> bytes:
    data = json.dumps(body).encode()
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=data, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            return resp.read()
    except urllib.error.HTTPError as exc:
        raise RuntimeError(f"mlx_lm.server answered {exc.code}: {exc.read()!r}") from None


def _norm(raw: bytes) -> bytes:
    return _CREATED.sub(b'"created": 0', _ID.sub(b'"ID"', raw))


def _ours(profile, completion, path, body, index) -> bytes:
    ctx = RequestContext(ids=IdSource(0, index), created=0, prompt_tokens=PROMPT_TOKENS)
    kind = "chat" if path == "/v1/chat/completions" else "completions"
    view = ENDPOINTS[kind].schema.model_validate(body).view(body["model"], body)  # the server's own request path
    reply = profile.surface(kind, completion, view, ctx)
    return reply.body if not reply.streamed else b"".join(reply.frames)


def _write_goldens(directory: str, release: str, fingerprint: str, records: list[dict[str, Any]]) -> Path:
    """``directory/replies.jsonl.gz``: the header line, then ``records``; the same replies give the
    same bytes (gzip ``mtime`` 0, no file name, keys in a fixed order)."""
    header = {
        "generator": "tools/mlxlm_diff.py --record",
        "server": f"mlx-lm {release} (the wheel's server.APIHandler, detokenizer and text state machine; scripted generator)",
        "prompt_tokens": PROMPT_TOKENS,
        "system_fingerprint": fingerprint,
        "normalised": 'ids ("ID") and created (0)',
    }
    lines = [json.dumps(line, ensure_ascii=False, separators=(",", ":")) for line in (header, *records)]
    out = Path(directory) / "replies.jsonl.gz"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(gzip.compress(("\n".join(lines) + "\n").encode(), compresslevel=9, mtime=0))
    return out


def main() -> int:
    record_dir = None
    if "--record" in sys.argv:
        at = sys.argv.index("--record")
        record_dir = sys.argv[at + 1]
        del sys.argv[at : at + 2]
    sys.path[:0] = [sys.argv[2], sys.argv[1]]
    import importlib

    # mlx_lm/__init__.py exports a function named generate: fetch the modules themselves
    gen_mod, server, tu = (importlib.import_module(f"mlx_lm.{m}") for m in ("generate", "server", "tokenizer_utils"))

    release = next(Path(sys.argv[1]).glob("mlx_lm-*.dist-info")).name.removesuffix(".dist-info").split("-")[1]
    fingerprint = MlxLmProfile().system_fingerprint  # the default: the goldens replay against MockServer(profile="mlx-lm")
    profile = MlxLmProfile(system_fingerprint=fingerprint)
    state: dict[str, Any] = {}
    wrapper = tu.TokenizerWrapper(_Tokenizer(), tu.BPEStreamingDetokenizer, eos_token_ids=sorted(EOS))
    assert not wrapper.has_thinking and not wrapper.has_tool_calling, "mlx-lm found markers in gpt-oss's vocabulary"

    def handler(*args, **kwargs):
        return server.APIHandler(state["generator"], *args, system_fingerprint=fingerprint, **kwargs)

    server.APIHandler.log_message = lambda *args: None  # quiet: one access line per request
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    httpd.handle_error = lambda *args: None  # the stream_options={} KeyError, expected
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    port = httpd.server_address[1]
    compared, diffs, completions, records = 0, [], 0, []
    base = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
    cases = [(f"{name}#{i}", step.completion) for name in builtin_names() for i, step in enumerate(load_named(name).steps) if step.completion is not None]
    for name, completion in cases + _seeded(SEEDED):
        completions += 1
        for limit in (None, 7):
            emission = completion.emit(limit if limit is not None else 512)
            state["generator"] = _theirs_generator(wrapper, gen_mod, server, list(emission.tokens), emission.finish_reason)
            for path, extra in (("/v1/chat/completions", {}), ("/v1/completions", {"prompt": "p"})):
                for stream in (False, True):
                    body = {**base, **extra, "stream": stream}
                    if limit is not None:
                        body["max_tokens"] = limit
                    if stream:  # with usage, or {} (mlx-lm's KeyError after the finish chunk)
                        body["stream_options"] = {"include_usage": True} if compared % 4 != 3 else {}
                    theirs = _norm(_post(port, path, body))
                    if record_dir is not None and "#" in name:
                        records.append({"case": name, "tokens": list(completion.tokens), "path": path, "body": body, "reply": theirs.decode()})
                    ours = _norm(_ours(profile, completion, path, body, compared))
                    compared += 1
                    if theirs != ours:
                        diffs.append((name, limit, path, stream, theirs[:400], ours[:400]))
    httpd.shutdown()
    if record_dir is not None:
        print(f"recorded {len(records)} replies of mlx-lm {release} to {_write_goldens(record_dir, release, fingerprint, records)}")
    print(f"mlx-lm {release}: {completions} completions ({completions - SEEDED} from the built-in scenarios, {SEEDED} seeded), {compared} replies compared byte for byte with mlx_lm.server's APIHandler, {len(diffs)} differ")
    for d in diffs[:5]:
        print(*d, sep="\n  ")
    return 1 if diffs else 0


if __name__ == "__main__":
    sys.exit(main())
