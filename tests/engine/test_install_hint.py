"""The install hint for mockoss's ``vllm`` extra (newcomer finding, session 14).

``mockoss serve --engine vllm`` without vLLM said "Install it with ``pip install 'mockoss[vllm]'``";
mockoss is not on the package index (README: Install into your project), so that command would
install whatever else carries the name. The hint now names the checkout (PEP 610's
``direct_url.json`` for a ``pip install /path/to/mockoss``).
"""

from __future__ import annotations

import importlib.util
import json
import shlex
import sys
from pathlib import Path

import pytest

import mockoss
from mockoss.cli import main
from mockoss.engines import install_hint

CHECKOUT = Path(mockoss.__file__).resolve().parents[1]


def test_a_source_install_names_its_checkout():
    assert install_hint.install_extra_hint("vllm") == f"`pip install -e '{CHECKOUT}[vllm]'`"


class _Dist:
    def __init__(self, record: dict) -> None:
        self.record = record

    def read_text(self, name: str) -> str:
        assert name == "direct_url.json"
        return json.dumps(self.record)


def test_a_wheel_installed_from_a_clone_names_the_clone(monkeypatch, tmp_path):
    clone = tmp_path / "my mockoss"
    (clone / "mockoss").mkdir(parents=True)
    (clone / "mockoss" / "__init__.py").write_text("")
    (clone / "pyproject.toml").write_text('[project]\nname = "mockoss"\n')
    real = install_hint._is_checkout
    monkeypatch.setattr(install_hint, "_is_checkout", lambda path: path != CHECKOUT and real(path))
    monkeypatch.setattr(
        install_hint.metadata, "distribution", lambda name: _Dist({"url": clone.as_uri(), "dir_info": {}})
    )
    assert install_hint.install_extra_hint("vllm") == f"`pip install '{clone}[vllm]'`"


def test_without_a_checkout_the_hint_is_generic_and_never_the_package_index(monkeypatch):
    monkeypatch.setattr(install_hint, "_is_checkout", lambda path: False)
    monkeypatch.setattr(
        install_hint.metadata, "distribution", lambda name: _Dist({"url": "https://example.invalid/x.whl"})
    )
    hint = install_hint.install_extra_hint("vllm")
    assert hint.startswith("`pip install '<path to your mockoss clone>[vllm]'`")
    assert "'mockoss[vllm]'" not in hint


@pytest.mark.skipif(importlib.util.find_spec("vllm") is not None, reason="vLLM is installed here")
def test_serve_engine_vllm_without_vllm_says_to_install_from_the_checkout(capsys):
    assert main(["serve", "--engine", "vllm", "--port", "0"]) == 2
    err = capsys.readouterr().err
    assert f"`{shlex.quote(sys.executable)} -m pip install -e '{CHECKOUT}[vllm]'`" in err
    assert "'mockoss[vllm]'" not in err


@pytest.mark.skipif(importlib.util.find_spec("vllm") is not None, reason="vLLM is installed here")
def test_the_hint_installs_into_the_python_the_probe_failed_for(tmp_path):
    # --vllm-python names another interpreter: a bare `pip` would install into the one on PATH.
    from mockoss.engines import EngineError
    from mockoss.engines.vllm.launcher import VllmEngine

    odd = tmp_path / "my venv" / "python"  # a space: the command must be shell-quoted
    odd.parent.mkdir()
    odd.symlink_to(sys.executable)
    with pytest.raises(EngineError) as failed:
        VllmEngine(python=str(odd)).check()
    assert f"with `'{odd}' -m pip install -e '{CHECKOUT}[vllm]'`" in str(failed.value)


@pytest.mark.parametrize(
    ("pyproject", "is_checkout"),
    [
        ('[project]\nname = "mockoss"\n', True),
        ("[project]\nname='mockoss'\n", True),  # TOML's literal string, no spaces
        ('[project]\nversion = "1"\nname = "mockoss"  # the kit\n', True),
        ('[project]\nname = "other"\n[tool.x]\nname = "mockoss"\n', False),  # another table's name
        ('[project]\nname = "mockoss\n', False),  # not TOML
    ],
)
def test_a_checkout_is_told_by_its_parsed_pyproject(tmp_path, pyproject, is_checkout):
    (tmp_path / "mockoss").mkdir()
    (tmp_path / "mockoss" / "__init__.py").write_text("")
    (tmp_path / "pyproject.toml").write_text(pyproject)
    assert install_hint._is_checkout(tmp_path) is is_checkout


def test_a_vllm_python_that_does_not_exist_is_named_and_not_installed_into(tmp_path):
    # A newcomer's --vllm-python /nonexistent/python was told to run `/nonexistent/python -m pip install …`.
    from mockoss.engines import EngineError
    from mockoss.engines.vllm.launcher import VllmEngine

    missing = tmp_path / "nowhere" / "python"
    with pytest.raises(EngineError) as failed:
        VllmEngine(python=str(missing)).check()
    message = str(failed.value)
    assert f"there is no Python at {missing}" in message and "-m pip install" not in message


@pytest.mark.skipif(importlib.util.find_spec("vllm") is not None, reason="vLLM is installed here")
def test_the_hint_includes_the_uninstall_step_the_readme_gives():
    from mockoss.engines import EngineError
    from mockoss.engines.vllm.launcher import VllmEngine

    with pytest.raises(EngineError) as failed:
        VllmEngine(python=sys.executable).check()
    assert f"`{shlex.quote(sys.executable)} -m pip uninstall -y torchvision torchaudio torchcodec`" in str(failed.value)
