"""A scenario file that does not load is parsed once per content, like one that does (a reviewer's
reproducer, issue 9: a broken 20,000-step file in a --scenario-dir was parsed again by every
request naming it, 4.5-9.4 s of event loop each)."""

from __future__ import annotations

import pytest

from mockoss.scenario import loader
from mockoss.scenario.cache import clear_scenario_cache, failed_scenarios
from mockoss.scenario.loader import ScenarioError, load_named


def test_a_broken_file_is_parsed_once_and_gives_the_same_error(tmp_path, monkeypatch):
    (tmp_path / "broken.yaml").write_text("version: 1\nsteps:\n  - completion: {messages: [{chanel: final}]}\n")
    calls: list[str] = []
    compile_ = loader._compile

    def counted(raw, origin, name):
        calls.append(name)
        return compile_(raw, origin, name)

    monkeypatch.setattr(loader, "_compile", counted)
    errors = []
    for _ in range(3):
        with pytest.raises(ScenarioError) as info:
            load_named("broken", [tmp_path])
        errors.append(str(info.value))
    assert calls == ["broken"]
    assert errors[0] == errors[1] == errors[2] and "broken.yaml:3" in errors[0]
    # Edited: new bytes, parsed again (and now it loads).
    (tmp_path / "broken.yaml").write_text("version: 1\nsteps:\n  - completion: {messages: [{channel: final, content: hi}]}\n")
    assert load_named("broken", [tmp_path]).name == "broken"
    assert calls == ["broken", "broken"]


def test_clearing_the_scenario_cache_forgets_failures_too(tmp_path):
    (tmp_path / "bad.yaml").write_text("version: 1\nsteps: 7\n")
    with pytest.raises(ScenarioError):
        load_named("bad", [tmp_path])
    assert len(failed_scenarios) >= 1
    clear_scenario_cache()
    assert len(failed_scenarios) == 0
