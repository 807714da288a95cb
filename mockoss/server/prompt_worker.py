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
(:func:`mockoss.harmony.encoding.encode_text`); the answer is :data:`IDS` then the ids as unsigned
32-bit integers in this machine's byte order. An endpoint name of ``render`` asks for the
prompt token ids of a request body: the raw bytes are an endpoint name, a NUL byte and the body,
and the answer is ``ENDPOINTS[name].render_prompt(json.loads(body))``
(:data:`mockoss.endpoints.ENDPOINTS`) as ASCII decimal numbers joined by commas, the form a JSON
array holds them in (Ollama's ``context``: the server neither converts nor joins them, which for
a 10 MB prompt's 2,000,000 ids took ~0.2 s holding the GIL). When encoding or rendering raised,
the answer to either is :data:`PANICKED` then the text of the exception, UTF-8, if it was
openai-harmony's tokenizer panicking (the server raises :class:`PanicException` with that text
instead of tokenizing again: a 1,000,000-character word's panic costs ~90 ms holding the GIL),
else :data:`ENCODE_FAILED` (the server does it in process, which raises the same).
An endpoint name of ``gptoss-reference`` asks for that profile's whole prompt (its
``usage.input_tokens``), a kept chain merged in: the payload of
:func:`mockoss.profiles.gptoss_ref.prerender.worker_payload`, answered by
:func:`~mockoss.profiles.gptoss_ref.prerender.worker_answer` (``=`` and the ids as above, or its
``PromptError``), else as a failed render (:data:`PANICKED`, :data:`ENCODE_FAILED`).
Exits when stdin closes (the server went away).

A plain subprocess rather than :mod:`multiprocessing`: its ``spawn`` start method runs the
parent's main script again in the child, which a user's test script without an
``if __name__ == "__main__"`` guard does not survive.
"""

from __future__ import annotations

import contextlib
import struct
import subprocess
import sys
from array import array
from typing import BinaryIO

__all__ = ["ENCODE_FAILED", "IDS", "PANICKED", "PanicException", "read_frame", "serve", "stop_child", "write_frame"]

_LENGTH = struct.Struct(">I")
#: The answer to an ``encode`` or ``render`` request whose work raised, other than a tokenizer panic.
ENCODE_FAILED = b"!"
#: The first byte of the answer to an ``encode`` or ``render`` request whose tokenizer panicked;
#: the text of the panic follows.
PANICKED = b"?"
#: The first byte of the answer to an ``encode`` request that encoded; the ids follow.
IDS = b"="


class PanicException(BaseException):
    """openai-harmony's tokenizer panic, as the worker process reported it: raised in the server
    with the panic's text, in place of pyo3's ``PanicException`` (a ``BaseException`` too), so
    that it is answered as that panic is, byte for byte
    (:func:`mockoss.server.replies.failure_reply` reads the class name and ``str(exc)``), without
    running the tokenizer again in process: a 1,000,000-character word panics after ~90 ms holding
    the GIL (``called `Result::unwrap()` on an `Err` value: RuntimeError(StackOverflow)``), and a
    client could repeat it (issue 9, review)."""


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


def stop_child(process: subprocess.Popen[bytes]) -> None:
    """Kill a worker child, reap it, and close our ends of its pipes (bytes still unflushed to a
    dead process are dropped). The parents of both helper processes use it: this module's
    (:class:`mockoss.server.prompt_client._Worker`) and the recorder's scans
    (:class:`mockoss.upstream.scan_worker.ScanWorker`)."""
    process.kill()
    process.wait()
    for pipe in (process.stdin, process.stdout):
        if pipe is not None:
            with contextlib.suppress(OSError):
                pipe.close()


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
        if endpoint in (b"encode", b"encode-plain", b"render", b"gptoss-reference"):
            try:
                answer = _ids(endpoint, raw)
            except BaseException as exc:  # a tokenizer panic is a BaseException
                if isinstance(exc, (KeyboardInterrupt, SystemExit)):
                    raise
                answer = PANICKED + str(exc).encode("utf-8", "surrogatepass") if type(exc).__name__ == "PanicException" else ENCODE_FAILED
            write_frame(sink, answer)
            continue
        write_frame(sink, str(prompt_tokens(endpoint.decode(), raw)).encode())


def _ids(request: bytes, raw: bytes) -> bytes:
    """The answer to an ``encode``, ``encode-plain``, ``render`` or ``gptoss-reference`` request (see above;
    the last: :func:`mockoss.profiles.gptoss_ref.prerender.worker_answer`)."""
    if request == b"gptoss-reference":
        from mockoss.jsonbody import parse_json
        from mockoss.profiles.gptoss_ref.prerender import worker_answer

        return worker_answer(raw, parse_json)
    if request == b"render":
        import json

        from mockoss.endpoints import ENDPOINTS

        name, _, body = raw.partition(b"\0")
        return ",".join(map(str, ENDPOINTS[name.decode()].render_prompt(json.loads(body)))).encode("ascii")
    from mockoss.harmony.encoding import encode_text

    return IDS + array("I", encode_text(raw.decode("utf-8", "surrogatepass"), special=request == b"encode")).tobytes()


def main() -> int:
    serve(sys.stdin.buffer, sys.stdout.buffer)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
