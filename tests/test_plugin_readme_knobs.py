"""The README's ``monkeypatch.setattr(…)`` recipes run as written inside a test that takes the
``mockoss`` fixture, and set the module attribute they name (issue 9, eleventh-session breaker,
finding 9: ``monkeypatch.setattr(mockoss.profiles.reply_limit, …)`` failed there, ``mockoss`` being
the fixture, not the package; the recipes now name the attribute as a dotted string).

A pytester subprocess, as tests/test_plugin_options.py: openai-harmony cannot be initialised twice
in one process."""

import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


from plugin_support import plugin_pytester  # noqa: F401 (autouse: the pytester project and environment)


def test_the_readme_monkeypatch_recipes_run_in_a_test_with_the_fixture(pytester):
    recipes = sorted(set(re.findall(r"`(monkeypatch\.setattr\([^`]*\))`", README.read_text(encoding="utf-8"))))
    assert len(recipes) >= 2, recipes
    tests = []
    for i, recipe in enumerate(recipes):
        call = recipe.replace(", n)", ", 12345)")
        tests.append(
            f"def test_recipe_{i}(mockoss, monkeypatch):\n"
            f"    n = 12345\n"
            f"    {call}\n"
            f"    target = {call!r}.split('(', 1)[1].split(',', 1)[0].strip().strip('\"')\n"
            f"    module, _, name = target.rpartition('.')\n"
            f"    assert getattr(importlib.import_module(module), name) in (12345, 0.5)\n"
        )
    pytester.makepyfile(test_recipes="import importlib\n\n\n" + "\n\n".join(tests))
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=len(recipes))
