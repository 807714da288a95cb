"""The prompt-count worker process: ``python -m mockoss.server.prompt_worker`` (started by
:mod:`mockoss.server.offload`, not by hand).

Reads requests from stdin and writes answers to stdout, one at a time, each framed as a 4-byte
big-endian length and a payload. Request payload: the endpoint name, a NUL byte, the server's
prompt-cache generation in ASCII (:func:`mockoss.endpoints.prompt_cache_generation`), a NUL byte,
the raw body. Answer payload: the prompt token count in ASCII
(:func:`mockoss.endpoints.prompt_tokens`). When the generation changes (the server was reset),
the worker empties its own count caches first, so that ``reset`` frees them here too.
An endpoint name of ``encode`` or ``encode-plain`` asks instead for the token ids of the raw
bytes, UTF-8 text, with special-token strings read as special tokens or as text
(:func:`mockoss.harmony.encoding.encode_text`); the answer is the ids as unsigned 32-bit
integers in this machine's byte order, or :data:`ENCODE_FAILED` when encoding raised (the server
then encodes in process, which raises the same). An endpoint name of ``render`` asks for the
prompt token ids of a request body: the raw bytes are an endpoint name, a NUL byte and the body,
and the answer is ``ENDPOINTS[name].render_prompt(json.loads(body))``
(:data:`mockoss.endpoints.ENDPOINTS`) as ASCII decimal numbers joined by commas, the form a JSON
array holds them in (Ollama's ``context``: the server neither converts nor joins them, which for
a 10 MB prompt's 2,000,000 ids took ~0.2 s holding the GIL), or :data:`ENCODE_FAILED` when
rendering raised (a tokenizer panic: the server renders in process, which raises the same).
Exits when stdin closes (the server went away).

A plain subprocess rather than :mod:`multiprocessing`: its ``spawn`` start method runs the
parent's main script again in the child, which a user's test script without an
``if __name__ == "__main__"`` guard does not survive.
"""

from __future__ import annotations

import struct
import sys
from array import array
from typing import BinaryIO

__all__ = ["ENCODE_FAILED", "read_frame", "serve", "write_frame"]

_LENGTH = struct.Struct(">I")
#: The answer to an ``encode`` request whose encoding raised (one byte: never a whole number of ids).
ENCODE_FAILED = b"!"


def read_frame(stream: BinaryIO) -> bytes | None:
    """One length-prefixed payload, or ``None`` at end of stream."""
    head = stream.read(_LENGTH.size)
    if len(head) < _LENGTH.size:
        return None
    (size,) = _LENGTH.unpack(head)
    payload = stream.read(size)
    return payload if len(payload) == size else None


def write_frame(stream: BinaryIO, payload: bytes) -> None:
    """Write one length-prefixed payload and flush."""
    stream.write(_LENGTH.pack(len(payload)) + payload)
    stream.flush()


def serve(source: BinaryIO, sink: BinaryIO) -> None:
    """Answer framed requests from ``source`` on ``sink`` until ``source`` ends (see above)."""
    from mockoss.endpoints import clear_prompt_caches, prompt_tokens

    generation = b"0"
    while (payload := read_frame(source)) is not None:
        endpoint, _, rest = payload.partition(b"\0")
        seen, _, raw = rest.partition(b"\0")
        if seen != generation:
            clear_prompt_caches()
            generation = seen
        if endpoint in (b"encode", b"encode-plain", b"render"):
            try:
                answer = _ids(endpoint, raw)
            except BaseException as exc:  # a tokenizer panic is a BaseException
                if isinstance(exc, (KeyboardInterrupt, SystemExit)):
                    raise
                answer = ENCODE_FAILED
            write_frame(sink, answer)
            continue
        write_frame(sink, str(prompt_tokens(endpoint.decode(), raw)).encode())


def _ids(request: bytes, raw: bytes) -> bytes:
    """The answer to an ``encode``, ``encode-plain`` or ``render`` request (see above)."""
    if request == b"render":
        import json

        from mockoss.endpoints import ENDPOINTS

        name, _, body = raw.partition(b"\0")
        return ",".join(map(str, ENDPOINTS[name.decode()].render_prompt(json.loads(body)))).encode("ascii")
    from mockoss.harmony.encoding import encode_text

    return array("I", encode_text(raw.decode("utf-8", "surrogatepass"), special=request == b"encode")).tobytes()


def main() -> int:
    serve(sys.stdin.buffer, sys.stdout.buffer)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
