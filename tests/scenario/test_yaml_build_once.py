""":func:`mockoss.scenario.yamlsafe.parse` runs ``build`` once: a scenario whose construction
fails on libyaml's tree (an unknown tag, an unhashable key, a merge of a scalar) was parsed and
built a second time by PyYAML before session 18, to get PyYAML's message; now the error is
raised at once, with PyYAML's marks, and its text is PyYAML's.
"""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from mockoss.scenario import loader, yamlsafe
from mockoss.scenario.cache import clear_scenario_cache
from mockoss.scenario.compiled import ScenarioError
from mockoss.scenario.loader import scenario_from_bytes

pytestmark = pytest.mark.skipif(yamlsafe._C_LOADER is None, reason="PyYAML without libyaml")

FAILING = {
    "unknown_tag": "version: 1\nsteps:\n  - completion: !custom {raw: x}\n",
    "unhashable_key": "version: 1\nsteps:\n  - ? [1]\n    : 2\n",
    "merge_scalar": "version: 1\nsteps:\n  - {<<: 1, completion: {raw: x}}\n",
    "bom_unicode_crlf": "\ufeffversion: 1\r\nnote: é😀 ünïcødé\r\nsteps:\r\n  - completion: !custom x\r\n",
}


def _compile(text: str, monkeypatch: pytest.MonkeyPatch) -> tuple[str, int]:
    """The scenario's error and how many times its tree was built (``check_expansion`` is the
    loader's build's first call)."""
    builds: list[int] = []
    real = loader.check_expansion

    def spy(root: yaml.Node) -> int:
        builds.append(1)
        return real(root)

    monkeypatch.setattr(loader, "check_expansion", spy)
    clear_scenario_cache()
    with pytest.raises(ScenarioError) as caught:
        scenario_from_bytes(text.encode("utf-8"), name="case", origin="case.yaml")
    monkeypatch.setattr(loader, "check_expansion", real)
    return str(caught.value), len(builds)


@pytest.mark.parametrize("name", sorted(FAILING))
def test_a_scenario_whose_build_fails_is_built_once(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    with_c, built = _compile(FAILING[name], monkeypatch)
    assert built == 1
    with monkeypatch.context() as patch:
        patch.setattr(yamlsafe, "_C_LOADER", None)
        python, _ = _compile(FAILING[name], monkeypatch)
    assert with_c == python
    assert "invalid YAML" in with_c


@pytest.mark.parametrize("name", sorted(FAILING))
def test_the_construction_error_reads_as_pyyaml_s(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The whole text: context and problem, each with the quoted line and caret PyYAML shows
    (libyaml's own marks have no snippet; after a byte order mark they count one less)."""

    def outcome() -> str:
        def build(loader: Any, root: yaml.Node | None) -> Any:
            return yamlsafe.construct(loader, root)

        with pytest.raises(yaml.YAMLError) as caught:
            yamlsafe.parse(FAILING[name], build)
        return str(caught.value)

    with_c = outcome()
    with monkeypatch.context() as patch:
        patch.setattr(yamlsafe, "_C_LOADER", None)
        assert with_c == outcome()
    assert "^" in with_c


def test_a_build_error_that_is_not_yaml_s_is_raised_once() -> None:
    """Any other error of ``build`` propagates from the libyaml path as it is."""
    calls: list[str] = []

    def build(loader: Any, root: yaml.Node | None) -> Any:
        calls.append(type(loader).__name__)
        raise UnicodeError("from build")

    with pytest.raises(UnicodeError, match="from build"):
        yamlsafe.parse("a: 1\n", build)
    assert calls == ["CSafeLoader"]
