"""The YAML node budget counts what aliases add, not the document's own nodes (the sixteenth
session's breaker, item 10: a plain 14 MB scenario of 200,000 steps, no alias, was refused as a
"billion laughs" after 102 s; its size alone bounds a plain document). The alias shapes stay
refused: tests/server/test_limits.py (billion laughs, recursive aliases)."""

from __future__ import annotations

import pytest

from mockoss.scenario.loader import ScenarioError, scenario_from_bytes
from mockoss.scenario.yamlsafe import YamlLimitError, load_plain


def test_a_plain_value_larger_than_the_budget_is_not_an_alias_expansion():
    """A switch header's value has a 10,000-node budget: 12,000 plain items add nothing."""
    items = load_plain("[" + ", ".join(["1"] * 12_000) + "]")
    assert len(items) == 12_000


def test_aliases_adding_more_than_the_budget_are_still_refused():
    text = "{a: &a [" + ", ".join(["1"] * 100) + "], b: [" + ", ".join(["*a"] * 120) + "]}"
    with pytest.raises(YamlLimitError, match=r"aliases expand to more than 10,000 nodes beyond the file's own"):
        load_plain(text)
    assert len(load_plain(text.replace(", ".join(["*a"] * 120), ", ".join(["*a"] * 90)))["b"]) == 90


def test_a_plain_scenario_past_the_old_node_count_loads(monkeypatch):
    """Its steps are counted once each: 8 nodes a step. Checked with a budget lowered to 1,000
    (the shipped 2,000,000 would take ~100 s of YAML parsing to reach)."""
    from mockoss.scenario import loader, yamlsafe

    monkeypatch.setattr(loader, "check_expansion", lambda root: yamlsafe.check_expansion(root, 1_000))
    steps = "".join(f'  - completion: {{messages: [{{channel: final, content: "answer {i}"}}]}}\n' for i in range(300))
    raw = ("version: 1\nsteps:\n" + steps).encode()
    assert len(scenario_from_bytes(raw, name="plain", origin="plain.yaml").steps) == 300
    laughs = raw + b"more: &m [1, 2, 3, 4, 5, 6, 7, 8, 9]\nagain: [" + b", ".join([b"*m"] * 120) + b"]\n"
    with pytest.raises(ScenarioError, match=r"^plain2\.yaml:\d+: YAML aliases expand to more than 1,000 nodes"):
        scenario_from_bytes(laughs, name="plain2", origin="plain2.yaml")
