"""A test-id session reads the operator's ``--scenario-dir`` files as the server does.

``ControlPlane._copy`` built a session's server without the base's ``scenario_dirs``, so
``X-Mockoss-Scenario: NAME`` in a session found only the files the base server had already loaded
(noticed by an engineer of issue 9's 15th session while moving the files' compile off the lock).
"""

from __future__ import annotations

from starlette.testclient import TestClient

from mockoss.server.app import create_app
from mockoss.server.core import MockServer

CHAT = {"model": "openai/gpt-oss-20b", "messages": [{"role": "user", "content": "hi"}]}
SCENARIO = (
    "version: 1\nsteps:\n  - completion:\n      messages:\n        - {channel: final, content: from the directory}\n"
)


def test_a_session_selects_a_scenario_dir_file_the_server_never_loaded(tmp_path) -> None:
    (tmp_path / "mine.yaml").write_text(SCENARIO)
    server = MockServer(scenario="clean-answer", scenario_dirs=[tmp_path])
    with TestClient(create_app(server), base_url="http://127.0.0.1:8080") as http:
        headers = {"x-mockoss-test-id": "t1", "x-mockoss-scenario": "mine"}
        reply = http.post("/v1/chat/completions", json=CHAT, headers=headers)
        assert reply.status_code == 200, reply.text
        assert reply.json()["choices"][0]["message"]["content"] == "from the directory"
