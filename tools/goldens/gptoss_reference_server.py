#!/usr/bin/env python
"""Start the gpt-oss reference Responses server (``gpt_oss.responses_api``) with a scripted backend.

Runs in a Python where openai/gpt-oss's ``gpt_oss`` package and its imports are present (not
mockoss's: openai-harmony and oss-harmony install the same ``openai_harmony`` module), e.g. the
scratch venv ``/work/gptoss-venv`` with the repository's source on ``PYTHONPATH``. Driven by
``tools/goldens/gptoss_reference.py``.

The server is the repository's own ``create_api_server(infer_next_token, encoding)``
(openai/gpt-oss@7b58334:gpt_oss/responses_api/api_server.py) served by uvicorn on loopback, the
way ``gpt_oss/responses_api/serve.py`` serves it; only the inference backend is ours. The backend
is the seam ``serve.py`` plugs its backends into (``infer_next_token(tokens, temperature,
new_request) -> int``): when ``new_request`` is true it reads the token ids of the next scripted
completion from ``--script`` (a JSON list written by the driver before each request) and returns
them one per call. After the last scripted token it returns ``--after`` (default ``<|return|>``,
200002, so the server's loop ends), or raises when ``--after`` is ``error``.

Usage::

    PYTHONPATH=/work/gptoss-venv/src /work/gptoss-venv/bin/python tools/goldens/gptoss_reference_server.py \\
        --port 8391 --script /tmp/script.json
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def scripted_backend(script: Path, after: str):  # type: ignore[no-untyped-def]
    """The ``infer_next_token`` callable: the scripted tokens, then ``after`` (a token id or ``error``)."""
    queue: list[int] = []

    def infer_next_token(tokens: list[int], temperature: float = 0.0, new_request: bool = False) -> int:
        nonlocal queue
        if new_request:
            queue = list(json.loads(script.read_text()))
        if queue:
            return queue.pop(0)
        if after == "error":
            raise RuntimeError("scripted completion exhausted")
        return int(after)

    return infer_next_token


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--script", type=Path, required=True)
    parser.add_argument("--after", default="200002")
    args = parser.parse_args()

    import uvicorn
    from openai_harmony import HarmonyEncodingName, load_harmony_encoding

    from gpt_oss.responses_api.api_server import create_api_server

    encoding = load_harmony_encoding(HarmonyEncodingName.HARMONY_GPT_OSS)
    app = create_api_server(scripted_backend(args.script, args.after), encoding)
    uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
