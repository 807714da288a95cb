"""The body budget set from the pytest fixture, as ``max_body_bytes`` is (tests/test_plugin_body_limit.py):
``@pytest.mark.mockoss(body_budget_bytes=N)`` (or ``mockoss_config``) bounds the bytes that
request bodies still arriving hold together, so a second upload that stalls part-way gets the 503
the budget answers (mockoss.server.limits); the next test has the default again (4 x
``max_body_bytes``). Twelfth session, task T.

A pytester subprocess, as tests/test_plugin_options.py: openai-harmony cannot be initialised twice
in one process."""

from plugin_support import plugin_pytester  # noqa: F401 (autouse: the pytester project and environment)

RUN = ("-p", "no:cacheprovider", "-p", "no:randomly")


def test_body_budget_bytes_from_the_marker_and_mockoss_config(pytester):
    pytester.makepyfile(
        test_budget="""
        import socket
        import time
        from urllib.parse import urlsplit

        import pytest

        def _stalled(mockoss):
            # 90,000 bytes of a 99,000-byte body, the rest never sent.
            address = urlsplit(mockoss.url)
            client = socket.create_connection((address.hostname, address.port), timeout=10)
            client.sendall(
                b"POST /v1/chat/completions HTTP/1.1\\r\\nHost: 127.0.0.1\\r\\nContent-Type: application/json\\r\\n"
                b"Content-Length: 99000\\r\\n\\r\\n" + b" " * 90_000
            )
            return client

        def _answer(client, wait_s):
            client.settimeout(wait_s)
            try:
                return client.recv(1 << 16)
            except TimeoutError:
                return b""
            finally:
                client.close()

        def _second_answer(mockoss, wait_s):
            first = _stalled(mockoss)
            try:
                time.sleep(0.5)
                return _answer(_stalled(mockoss), wait_s)
            finally:
                first.close()

        @pytest.mark.mockoss(scenario="clean-answer", max_body_bytes=100_000, body_budget_bytes=150_000)
        def test_marker_sets_the_budget(mockoss):
            assert mockoss.server.body_budget_bytes == 150_000
            got = _second_answer(mockoss, 5)
            assert got.startswith(b"HTTP/1.1 503 ") and b"150,000 bytes" in got, got

        @pytest.mark.mockoss(scenario="clean-answer", max_body_bytes=100_000)
        def test_the_next_test_has_the_default_again(mockoss):
            assert mockoss.server.body_budget_bytes is None
            assert _second_answer(mockoss, 1) == b""  # 4 x 100,000: both are held

        @pytest.mark.mockoss(body_budget_bytes=0)
        def test_a_bad_value_fails_at_setup(mockoss):
            pass
        """,
        test_config="""
        import pytest

        @pytest.fixture
        def mockoss_config():
            return {"body_budget_bytes": 3000}

        def test_config_sets_it(mockoss):
            assert mockoss.server.body_budget_bytes == 3000

        @pytest.mark.mockoss(body_budget_bytes=4000)
        def test_marker_beats_config(mockoss):
            assert mockoss.server.body_budget_bytes == 4000
        """,
    )
    result = pytester.runpytest_subprocess(*RUN)
    result.assert_outcomes(passed=4, errors=1)
    result.stdout.fnmatch_lines(
        ["*TypeError: @pytest.mark.mockoss: body_budget_bytes= takes a number of bytes, at least 1*"]
    )
