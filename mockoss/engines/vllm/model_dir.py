"""The scripted gpt-oss model directory vLLM loads: built offline, cached, checked.

vLLM needs a Hugging Face style directory. Everything in it is built here from the o200k_harmony
encoding mockoss already holds offline (:mod:`mockoss.harmony.encoding`); nothing downloads:

* ``config.json``: ``model_type: gpt_oss`` and ``architectures: ["GptOssForCausalLM"]`` at tiny
  sizes. ``model_type`` is what switches vLLM to its Harmony paths
  (vllm-project/vllm@v0.32.0: ``vllm/entrypoints/openai/chat_completion/serving.py``,
  ``responses/serving.py``, ``vllm/renderers/online_renderer.py``: ``hf_config.model_type ==
  "gpt_oss"``), and the architecture name is what makes vLLM default the reasoning parser to
  ``openai_gptoss`` (``vllm/model_executor/models/config.py``, ``GptOssForCausalLMConfig``).
  The sizes matter only to vLLM's KV-cache planning; the scripted model has no weights.
* ``generation_config.json``: ``eos_token_id`` ``[<|return|>, <|endoftext|>, <|call|>]``, as
  openai/gpt-oss-20b ships it.
* ``tokenizer.json``: o200k_base's byte-level BPE (``transformers``' ``TikTokenConverter`` with
  tiktoken's o200k split pattern) plus every o200k_harmony special token, ids 199998–201087, as
  added special tokens; ``tokenizer_config.json`` names the fast tokenizer class.

The directory lives under ``<mockoss cache dir>/vllm-model-<VERSION>`` (``MOCKOSS_CACHE_DIR``, see
:func:`mockoss.harmony.encoding.cache_dir`) and is rebuilt when :data:`LAYOUT_VERSION` changes.
Building needs ``transformers`` and ``tiktoken`` (both vLLM dependencies), so it runs in vLLM's
Python: ``python -m mockoss.engines.vllm.model_dir`` prints the directory's path.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

from mockoss.harmony.encoding import VOCABULARY_FILE, cache_dir, load_encoding, vocabulary_dir

__all__ = [
    "FIRST_SPECIAL",
    "LAST_SPECIAL",
    "LAYOUT_VERSION",
    "O200K_PATTERN",
    "TokenizerMismatch",
    "check_tokenizer",
    "config",
    "ensure_model_dir",
]

#: Bumped whenever a file's content changes, so cached directories are rebuilt.
LAYOUT_VERSION = 1
#: The o200k_harmony special tokens: ``<|startoftext|>`` … ``<|reserved_201087|>``.
FIRST_SPECIAL, LAST_SPECIAL = 199998, 201087
VOCAB_SIZE = LAST_SPECIAL + 1  # 201088, gpt-oss's vocab_size

#: tiktoken's o200k_base split pattern (openai/tiktoken: ``tiktoken_ext/openai_public.py``, ``o200k_base``).
O200K_PATTERN = "|".join(  # noqa: FLY002  # one alternative a line, as tiktoken lists them
    [
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ]
)

#: Text the tokenizer check encodes: prose, code, digits, Unicode, and Harmony special tokens.
CHECK_SAMPLE = (
    "<|start|>system<|message|>You are ChatGPT.\nReasoning: medium<|end|>"
    "<|start|>user<|message|>What's the weather in Zürich, 東京 and 北京? 12345 + 678 = ?<|end|>"
    "<|start|>assistant<|channel|>analysis<|message|>Need get_weather(\"Zürich\").  Tabs\tand\r\nlines<|end|>"
    "<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json"
    '<|message|>{"location":"Zürich","units":["c"]}<|call|>'
    "<|start|>assistant<|channel|>final<|message|>It's 21 °C — sunny 🌞.<|return|><|reserved_201087|><|endoftext|>"
)


class TokenizerMismatch(RuntimeError):
    """The built ``tokenizer.json`` does not give openai_harmony's token ids for the check sample."""


def config() -> dict[str, Any]:
    """The ``config.json`` of the scripted model: gpt-oss's shape (``model_type``, vocabulary,
    rope scaling, sliding-window layer types) at tiny sizes (hidden 64, 1 layer, 2 experts)."""
    return {
        "architectures": ["GptOssForCausalLM"],
        "model_type": "gpt_oss",
        "vocab_size": VOCAB_SIZE,
        "hidden_size": 64,
        "intermediate_size": 64,
        "num_hidden_layers": 1,
        "num_attention_heads": 4,
        "num_key_value_heads": 1,
        "head_dim": 16,
        "num_local_experts": 2,
        "num_experts_per_tok": 1,
        "experts_per_token": 1,
        "layer_types": ["full_attention"],
        "sliding_window": 128,
        "max_position_embeddings": 131072,
        "initial_context_length": 4096,
        "rope_theta": 150000,
        "rope_scaling": {
            "rope_type": "yarn",
            "factor": 32.0,
            "beta_fast": 32.0,
            "beta_slow": 1.0,
            "truncate": False,
            "original_max_position_embeddings": 4096,
        },
        "attention_bias": True,
        "attention_dropout": 0.0,
        "hidden_act": "silu",
        "swiglu_limit": 7.0,
        "rms_norm_eps": 1e-05,
        "tie_word_embeddings": False,
        "torch_dtype": "float32",
        "eos_token_id": 200002,
        "pad_token_id": 199999,
        "use_cache": True,
    }


def _generation_config() -> dict[str, Any]:
    # openai/gpt-oss-20b's generation_config.json: <|return|>, <|endoftext|>, <|call|>.
    return {"bos_token_id": 199998, "eos_token_id": [200002, 199999, 200012], "pad_token_id": 199999}


def _tokenizer_config() -> dict[str, Any]:
    return {
        "tokenizer_class": "PreTrainedTokenizerFast",
        "model_max_length": 131072,
        "bos_token": "<|startoftext|>",
        "eos_token": "<|return|>",
        "pad_token": "<|endoftext|>",
        "clean_up_tokenization_spaces": False,
    }


def _special_tokens() -> list[str]:
    """The names of ids 199998–201087 as openai_harmony's o200k_harmony decodes them, in id order."""
    encoding = load_encoding()
    return [encoding.decode_utf8([token]) for token in range(FIRST_SPECIAL, LAST_SPECIAL + 1)]


def _write_tokenizer(directory: Path) -> None:
    """``tokenizer.json`` via ``transformers.convert_slow_tokenizer.TikTokenConverter``.

    Raises:
        ImportError: ``transformers`` or ``tiktoken`` is not installed (run in vLLM's Python).
    """
    from transformers.convert_slow_tokenizer import TikTokenConverter

    vocabulary = vocabulary_dir() / VOCABULARY_FILE
    specials = _special_tokens()
    tokenizer = TikTokenConverter(
        vocab_file=str(vocabulary), pattern=O200K_PATTERN, extra_special_tokens=specials
    ).converted()
    # add_special_tokens appends after the 199998 mergeable ranks: ids 199998… in list order.
    tokenizer.save(str(directory / "tokenizer.json"))


def check_tokenizer(directory: Path, sample: str = CHECK_SAMPLE) -> int:
    """Check that ``directory/tokenizer.json`` gives openai_harmony's ids for ``sample``, and
    that every special token id maps to its name. Returns the number of tokens compared.

    Raises:
        TokenizerMismatch: the first differing position and both ids.
    """
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(directory / "tokenizer.json"))
    expected = load_encoding().encode(sample, allowed_special="all")
    got = tokenizer.encode(sample, add_special_tokens=False).ids
    if got != expected:
        at = next((i for i, (a, b) in enumerate(zip(got, expected, strict=False)) if a != b), min(len(got), len(expected)))
        raise TokenizerMismatch(
            f"{directory}/tokenizer.json: ids differ from openai_harmony's at position {at}: "
            f"{got[at:at + 5]} != {expected[at:at + 5]} (lengths {len(got)}, {len(expected)})"
        )
    for token, name in enumerate(_special_tokens(), start=FIRST_SPECIAL):
        if tokenizer.token_to_id(name) != token:
            raise TokenizerMismatch(f"{directory}/tokenizer.json: {name} is id {tokenizer.token_to_id(name)}, not {token}")
    return len(expected)


def ensure_model_dir(root: Path | None = None) -> Path:
    """Return the scripted model directory, building and checking it first if it is not cached.

    Args:
        root: where cached directories live (default: the mockoss cache dir).

    Raises:
        ImportError: building needs ``transformers``, ``tiktoken`` and ``tokenizers``.
        TokenizerMismatch: see :func:`check_tokenizer` (the half-built directory is removed).
    """
    root = root or cache_dir()
    target = root / f"vllm-model-{LAYOUT_VERSION}"
    if (target / "tokenizer.json").is_file():
        return target
    root.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(dir=root, prefix=".vllm-model-"))
    try:
        for name, data in (
            ("config.json", config()),
            ("generation_config.json", _generation_config()),
            ("tokenizer_config.json", _tokenizer_config()),
        ):
            (work / name).write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
        _write_tokenizer(work)
        check_tokenizer(work)
        try:
            os.replace(work, target)
        except OSError:  # another process won the race: use its directory
            if not (target / "tokenizer.json").is_file():
                raise
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return target


def main() -> int:
    """``python -m mockoss.engines.vllm.model_dir``: print the model directory, building it if needed."""
    try:
        print(ensure_model_dir())
    except (ImportError, TokenizerMismatch) as exc:
        print(f"mockoss: cannot build the scripted vLLM model directory: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
