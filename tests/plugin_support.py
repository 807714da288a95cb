"""What the pytester-based plugin tests share (tests/test_plugin_*.py import it; tests/ is on
sys.path as each test file's directory)."""

import pytest


@pytest.fixture(autouse=True)
def plugin_pytester(pytester, monkeypatch):
    """A pytester project whose ini sets pytest-asyncio's loop scope, in an environment without
    the real-mode variables (so the fixture fakes, whatever the machine running the suite has set)."""
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    for name in ("MOCKOSS_REAL_URL", "MOCKOSS_REAL_API_KEY", "MOCKOSS_REAL_MODEL", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)

