"""The failure report shows scripted control characters escaped, as ``repr`` does (sixteenth-session
breaker, finding 13, /tmp/brk16/ut5/test_rep.py: a completion holding ``\\x1b[31m`` and NUL turned
the terminal red and garbled pytest's ``mockoss`` section)."""

from __future__ import annotations

from plugin_support import plugin_pytester  # noqa: F401 (autouse: the pytester project and environment)

TEST = """
import openai
from mockoss.steps import final, raw


def test_fail(mockoss):
    mockoss.use(raw("<|channel|>final<|message|>\\x00\\x1b[31mred\\r<|return|>"), final("never\\x1b]0;title\\x07used"))
    with openai.OpenAI(base_url=mockoss.base_url, api_key=mockoss.api_key, max_retries=0) as client:
        client.chat.completions.create(model=mockoss.model, messages=[{"role": "user", "content": "x"}])
    assert False
"""


def test_control_characters_in_the_report_are_escaped(pytester):
    pytester.makepyfile(test_rep=TEST)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    out = result.stdout.str()
    section = out[out.index(" mockoss ---") :]
    assert "\x1b" not in section and "\x00" not in section and "\r" not in section
    result.stdout.fnmatch_lines([r"*completion: <|channel|>final<|message|>\x00\x1b[[]31mred\r<|return|>*"])


def test_printable_escapes_controls_but_tab_and_newline():
    from mockoss.pytest_plugin._report import printable

    assert printable("a\x1b[31mb\x00c\td\x7f\x9fé\u2028") == "a\\x1b[31mb\\x00c\td\\x7f\\x9fé\u2028"
    assert printable("x\ry\n") == "x\\ry\n"
