"""`mockoss.eval.report`: counting, the printed tables and the saved JSON, as exact strings."""

import pytest

from mockoss.eval.report import EvalResult, ResultFileError, compare_rows, format_compare, format_share, format_table

MCP = "200 — reasoning, mcp_call(tool/mcp)"
FUNCTION = "200 — reasoning, function_call(mcp)"
MESSAGE = "200 — reasoning, message"
HARMONY_500 = '500 — InternalServerError: unexpected tokens remaining in message header: Some("to=functions.mcp")'

#: The two arms of the vLLM pull request's serving evaluation (40 requests each).
BEFORE = EvalResult.from_counts("http://gpu:8000/v1", "leak.json", {MCP: 31, FUNCTION: 4, MESSAGE: 1, HARMONY_500: 4})
AFTER = EvalResult.from_counts("http://gpu:8000/v1", "leak.json", {MESSAGE: 34, HARMONY_500: 6})


@pytest.mark.parametrize(
    ("count", "n", "text"),
    [(31, 40, "77.5%"), (4, 40, "10%"), (1, 40, "2.5%"), (34, 40, "85%"), (40, 40, "100%"), (1, 3, "33.3%"),
     (2, 3, "66.7%"), (0, 40, "0%"), (0, 0, "0%"), (1, 1000, "0.1%"), (1, 3000, "0%")],
)
def test_format_share(count, n, text):
    assert format_share(count, n) == text


def test_from_keys_orders_by_count_then_key():
    result = EvalResult.from_keys("u", "r", ["b", "a", "c", "c", "b", "c"], elapsed_s=1.5)
    assert result.outcomes == (("c", 3), ("b", 2), ("a", 1))
    assert result.n == 6
    assert result.count("b") == 2 and result.count("zzz") == 0
    ties = EvalResult.from_keys("u", "r", ["z", "y", "x"])
    assert [key for key, _ in ties.outcomes] == ["x", "y", "z"]


def test_format_table_exact():
    assert format_table(BEFORE) == (
        "outcome                                                                                             count  share\n"
        "200 — reasoning, mcp_call(tool/mcp)                                                                    31  77.5%\n"
        "200 — reasoning, function_call(mcp)                                                                     4    10%\n"
        '500 — InternalServerError: unexpected tokens remaining in message header: Some("to=functions.mcp")      4    10%\n'
        "200 — reasoning, message                                                                                1   2.5%\n"
        "total                                                                                                  40   100%"
    )


def test_format_table_short_keys():
    result = EvalResult.from_keys("u", "r", ["200 — content"] * 3)
    assert format_table(result) == (
        "outcome        count  share\n"
        "200 — content      3   100%\n"
        "total              3   100%"
    )


def test_format_compare_exact_over_the_union_of_outcomes():
    assert format_compare(BEFORE, AFTER) == (
        "outcome                                                                                                 before     after\n"
        "200 — reasoning, mcp_call(tool/mcp)                                                                 31 (77.5%)         0\n"
        '500 — InternalServerError: unexpected tokens remaining in message header: Some("to=functions.mcp")     4 (10%)   6 (15%)\n'
        "200 — reasoning, function_call(mcp)                                                                    4 (10%)         0\n"
        "200 — reasoning, message                                                                              1 (2.5%)  34 (85%)\n"
        "total                                                                                                       40        40"
    )


def test_compare_rows_put_new_outcomes_last():
    before = EvalResult.from_counts("u", "r", {"a": 2, "b": 1})
    after = EvalResult.from_counts("u", "r", {"c": 5, "b": 1, "d": 5})
    assert compare_rows(before, after) == [("a", 2, 0), ("b", 1, 1), ("c", 0, 5), ("d", 0, 5)]


def test_json_round_trip():
    result = EvalResult.from_counts("http://gpu:8000/v1", "leak.json", {MESSAGE: 34, HARMONY_500: 6}, 12.34567)
    data = result.to_json()
    assert data == {
        "url": "http://gpu:8000/v1",
        "request": "leak.json",
        "n": 40,
        "outcomes": [
            {"outcome": MESSAGE, "count": 34, "share": 0.85},
            {"outcome": HARMONY_500, "count": 6, "share": 0.15},
        ],
        "elapsed_s": 12.346,
    }
    assert EvalResult.from_json(data) == EvalResult.from_counts(
        "http://gpu:8000/v1", "leak.json", {MESSAGE: 34, HARMONY_500: 6}, 12.346
    )
    assert EvalResult.from_json({"outcomes": [{"outcome": "a", "count": 1, "share": 1.0}]}).n == 1


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ([], 'not a mockoss eval result: expected an object with an "outcomes" list'),
        ({"outcome": []}, 'not a mockoss eval result: expected an object with an "outcomes" list'),
        ({"outcomes": [{"outcome": "a", "count": 1}, {"outcome": "b"}]},
         'outcomes[1]: expected {"outcome": string, "count": integer >= 0}'),
        ({"outcomes": [{"outcome": "a", "count": -1}]}, 'outcomes[0]: expected {"outcome": string, "count": integer >= 0}'),
    ],
)
def test_from_json_rejects_other_files(data, message):
    with pytest.raises(ResultFileError) as info:
        EvalResult.from_json(data)
    assert str(info.value) == message
