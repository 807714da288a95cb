#!/usr/bin/env python
"""Goldens of the gpt-oss reference server's response store: chains of ``previous_response_id``.

Level ``http-server``, as ``tools/goldens/gptoss_reference.py`` (whose server runner and scripted
backend this uses): openai/gpt-oss@7b58334:gpt_oss/responses_api/api_server.py's own FastAPI app
(``responses_store``, the ``previous_response_id`` merge of ``generate``, ``store_callback``)
served by uvicorn, the backend scripted. Each chain of ``CHAINS`` (``gptoss_reference_store_chains.py``) is a list of requests sent in
order to one server; a request names earlier answers by placeholders, filled in from what the
server answered before it (its ids are random): ``<resp:N>`` is the id of step ``N``'s response,
``<call:N>`` the ``call_id`` of its first ``function_call`` item. Each step's completion is a case
of :mod:`mockoss.golden.cases`. A chain whose ``after`` is ``error`` runs on a server whose backend
raises after the scripted tokens (``--after error``) instead of returning ``<|return|>``.

Answers are normalised with one :class:`~mockoss.golden.normalise.Normaliser` per chain, so an id
that comes back (``previous_response_id``, a ``call_id``) is the same ``<…#N>`` in every step.
Written to ``tests/golden/chains-gptoss-reference/<chain>.json`` (not ``gptoss-reference-*``: that is
the per-case golden format); compared with the profile by
``tests/profiles/test_gptoss_reference_store.py``. Run from the main venv::

    python tools/goldens/gptoss_reference_store.py --server-python /tmp/gptoss-venv/bin/python \\
        --source /tmp/gptoss-src
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

import httpx

from mockoss.golden.normalise import Normaliser, split_sse
from mockoss.harmony.encoding import vocabulary_dir

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gptoss_reference_store_chains import CHAINS

GENERATOR = "tools/goldens/gptoss_reference_store.py"
COMMIT = "7b583341fe16729127f6d5b94a7b09ccae97e1a1"
OUT = ROOT / "tests" / "golden" / "chains-gptoss-reference"


def _response_of(step: dict[str, Any]) -> dict[str, Any] | None:
    """The response object a raw step answer holds: the body, or the last frame's ``response``."""
    if step.get("frames") is None:
        return step["body"] if isinstance(step.get("body"), dict) else None
    found = None
    for frame in step["frames"]:
        data = frame.split("\ndata: ", 1)[1] if "\ndata: " in frame else None
        if data:
            found = json.loads(data).get("response", found)
    return found


def fill(value: Any, answers: list[dict[str, Any] | None]) -> Any:
    """``value`` with every ``<resp:N>`` / ``<call:N>`` string replaced from ``answers`` (the
    response objects of the earlier steps, ``None`` where there was none: the placeholder stays)."""
    if isinstance(value, dict):
        return {k: fill(v, answers) for k, v in value.items()}
    if isinstance(value, list):
        return [fill(v, answers) for v in value]
    if isinstance(value, str) and value.startswith(("<resp:", "<call:")) and value.endswith(">"):
        response = answers[int(value[6:-1])]
        if response is None:
            return value
        if value.startswith("<resp:"):
            return response["id"]
        return next(item["call_id"] for item in response["output"] if item["type"] == "function_call")
    return value


def normalised(raw: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The raw answers of one chain (``status``, then ``body`` or ``frames`` as parsed JSON / frame
    texts, ``note``) normalised with one Normaliser."""
    normaliser = Normaliser()
    out = []
    for step in raw:
        entry: dict[str, Any] = {"status": step["status"]}
        if step.get("frames") is not None:
            entry["frames"] = [f for f in (normaliser.frame(f) for f in step["frames"]) if f]
        else:
            body = step["body"]
            entry["body"] = normaliser.json(body) if not isinstance(body, str) else body
        if step.get("note"):
            entry["note"] = step["note"]
        out.append(entry)
    return out


def _ask(client: httpx.Client, body: dict[str, Any]) -> dict[str, Any]:
    if not body.get("stream"):
        r = client.post("/v1/responses", json=body)
        try:
            return {"status": r.status_code, "body": r.json()}
        except ValueError:
            return {"status": r.status_code, "body": r.text}
    received, note = b"", None
    with client.stream("POST", "/v1/responses", json=body) as r:
        try:
            for chunk in r.iter_raw():
                received += chunk
        except (httpx.RemoteProtocolError, httpx.ReadError) as exc:
            note = f"connection dropped after frame {len(split_sse(received))} ({type(exc).__name__})"
    return {"status": r.status_code, "frames": split_sse(received), "note": note}


def _run_chain(
    args: argparse.Namespace, name: str, chain: dict[str, Any], tokens: dict[str, list[int]]
) -> list[dict[str, Any]]:
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "script.json"
        script.write_text("[]")
        env = {**os.environ, "PYTHONPATH": str(args.source), "TIKTOKEN_ENCODINGS_BASE": str(vocabulary_dir())}
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = int(sock.getsockname()[1])
        server = subprocess.Popen(
            [
                args.server_python,
                str(ROOT / "tools/goldens/gptoss_reference_server.py"),
                "--port",
                str(port),
                "--script",
                str(script),
                "--after",
                chain["after"],
            ],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=open(Path(tmp) / "log", "wb"),  # noqa: SIM115 (closed with the directory)
        )
        try:
            client = httpx.Client(
                base_url=f"http://127.0.0.1:{port}", timeout=60, limits=httpx.Limits(max_keepalive_connections=0)
            )
            for _ in range(300):
                try:
                    client.get("/")
                    break
                except httpx.TransportError:
                    if server.poll() is not None:
                        raise SystemExit((Path(tmp) / "log").read_text()[-2000:]) from None
                    time.sleep(0.1)
            raw: list[dict[str, Any]] = []
            for step in chain["steps"]:
                script.write_text(json.dumps(tokens[step["completion"]]))
                raw.append(_ask(client, fill(step["request"], [_response_of(r) for r in raw])))
            return raw
        finally:
            server.terminate()
            server.wait(10)


def main() -> None:
    from mockoss.golden.cases import all_cases

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--server-python", required=True)
    parser.add_argument("--source", required=True, type=Path, help="openai/gpt-oss checkout at --commit (PYTHONPATH)")
    parser.add_argument("--commit", default=COMMIT)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    tokens = {c.id: list(c.completion.tokens) for c in all_cases()}
    args.out.mkdir(parents=True, exist_ok=True)
    for name, chain in CHAINS.items():
        raw = _run_chain(args, name, chain, tokens)
        golden = {
            "header": {
                "server": "gptoss-reference",
                "level": "http-server",
                "generator": GENERATOR,
                "source": f"openai/gpt-oss@{args.commit}:gpt_oss/responses_api (uvicorn, scripted infer_next_token, "
                f"then {'an exception' if chain['after'] == 'error' else '<|return|>'})",
                "harmony_library": "openai-harmony 0.0.8",
                "switches": {
                    "conversation_start_date": datetime.date.today().isoformat(),
                    **({"end_of_script": "error"} if chain["after"] == "error" else {}),
                },
            },
            "chain": name,
            "steps": [{**step, **answer} for step, answer in zip(chain["steps"], normalised(raw))],
        }
        (args.out / f"{name}.json").write_text(
            json.dumps(golden, indent=1, ensure_ascii=False) + "\n", encoding="utf-8"
        )
        print(name, [a["status"] for a in raw])


if __name__ == "__main__":
    main()
