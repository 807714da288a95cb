"""Go-compatible JSON for the ollama profile: encoding, the scanner's errors, tool-call arguments.

GO_CASES were produced by a Go 1.19 program that decodes each text the way Ollama does
(``json.Unmarshal`` into an ordered map built on wk8/go-ordered-map v2.1.8, buger/jsonparser v1.1.1
and easyjson's writer) and prints the error or the re-encoded ``ToolCallFunction``; ``\\b``/``\\f``
are shown as Go >= 1.22 writes them. The same comparison over ~32,000 fuzzed texts found no
difference.
"""

import pytest

from mockoss.profiles.ollama.arguments import Arguments, parse_arguments
from mockoss.profiles.ollama.gojson import Raw, dumps, format_float, go_any, quote
from mockoss.profiles.ollama.goscan import syntax_error

# (raw text, arguments as Ollama writes them or None, Go error or None)
GO_CASES = [
    ("", None, "unexpected end of JSON input"),
    (" ", None, "unexpected end of JSON input"),
    ("ls -R\n", None, "invalid character 'l' looking for beginning of value"),
    ('{"a":1}', '{"a":1}', None),
    ('{"a":1}]', None, "invalid character ']' after top-level value"),
    ('[{"a":1}]', None, "Value looks like object, but can't find closing '}' symbol"),
    ("[]", None, "Value looks like object, but can't find closing '}' symbol"),
    ("{}", "{}", None),
    (" {} ", "{}", None),
    ("null", "null", None),
    (" null ", "null", None),
    ("true", None, "Value looks like object, but can't find closing '}' symbol"),
    ("false", None, "Value looks like object, but can't find closing '}' symbol"),
    ("1", None, "Value looks like object, but can't find closing '}' symbol"),
    ("-1.5e3", None, "Value looks like object, but can't find closing '}' symbol"),
    ('"x"', None, "Value looks like object, but can't find closing '}' symbol"),
    ('{"a":1,}', None, "invalid character '}' looking for beginning of object key string"),
    ('{"a" 1}', None, "invalid character '1' after object key"),
    ("{a:1}", None, "invalid character 'a' looking for beginning of object key string"),
    ('{"a":1 "b":2}', None, "invalid character '\"' after object key:value pair"),
    ("[1 2]", None, "invalid character '2' after array element"),
    ('{"a":tru}', None, "invalid character '}' in literal true (expecting 'e')"),
    ('{"a":nul}', None, "invalid character '}' in literal null (expecting 'l')"),
    ('{"a":fals}', None, "invalid character '}' in literal false (expecting 'e')"),
    ('{"a":-}', None, "invalid character '}' in numeric literal"),
    ('{"a":1.}', None, "invalid character '}' after decimal point in numeric literal"),
    ('{"a":1e}', None, "invalid character '}' in exponent of numeric literal"),
    ('{"a":1e+}', None, "invalid character '}' in exponent of numeric literal"),
    ('{"a":"x\ny"}', None, "invalid character '\\n' in string literal"),
    ('{"a":"\\q"}', None, "invalid character 'q' in string escape code"),
    ('{"a":"\\u12g4"}', None, "invalid character 'g' in \\u hexadecimal character escape"),
    ('{"a":01}', None, "invalid character '1' after object key:value pair"),
    ('{"a":.5}', None, "invalid character '.' looking for beginning of value"),
    ('{"a":+1}', None, "invalid character '+' looking for beginning of value"),
    ('{"a":1e400}', None, "json: cannot unmarshal number 1e400 into Go value of type float64"),
    ('{"a":-1e400}', None, "json: cannot unmarshal number -1e400 into Go value of type float64"),
    ('{"a":[1,{"b":1e999}]}', None, "json: cannot unmarshal number 1e999 into Go value of type float64"),
    ('{"a":1', None, "unexpected end of JSON input"),
    ('{"a":', None, "unexpected end of JSON input"),
    ('{"a"', None, "unexpected end of JSON input"),
    ('{"', None, "unexpected end of JSON input"),
    ("{", None, "unexpected end of JSON input"),
    ("[", None, "unexpected end of JSON input"),
    ('"abc', None, "unexpected end of JSON input"),
    ('{"a":"b"}}', None, "invalid character '}' after top-level value"),
    ('{"a":1}\n', '{"a":1}', None),
    ('{"a":1} x', None, "invalid character 'x' after top-level value"),
    ("{'a':1}", None, "invalid character '\\'' looking for beginning of object key string"),
    ('{"a":NaN}', None, "invalid character 'N' looking for beginning of value"),
    ('{"a":Infinity}', None, "invalid character 'I' looking for beginning of value"),
    ('{"z":1,"a":2,"z":3}', '{"z":3,"a":2}', None),
    ('{"k":{"z":1,"a":2,"z":3}}', '{"k":{"a":2,"z":3}}', None),
    ('{"a\\"b":1}', '{"a\\"b":1}', None),
    ('{"\\u0041":1}', '{"A":1}', None),
    ('{"\\ud800":1}', None, "Encountered an invalid escape sequence in a string"),
    ('{"\\ud83d\\ude00":1}', '{"😀":1}', None),
    ('{"v":"\\ud800"}', '{"v":"�"}', None),
    ('{"v":"\\ud83d\\ude00"}', '{"v":"😀"}', None),
    ('{"v":"\\ud83d\\ud83d\\ude00"}', '{"v":"�😀"}', None),
    ('{"<&>":"<&>"}', '{"\\u003c\\u0026\\u003e":"\\u003c\\u0026\\u003e"}', None),
    ('{"v":"\u2028\u2029"}', '{"v":"\\u2028\\u2029"}', None),
    ('{"k\u2028":1}', '{"k\\u2028":1}', None),
    ('{"v":12345678901234567890}', '{"v":12345678901234567000}', None),
    (
        '{"v":0.1,"w":1e-7,"x":1e21,"y":1e20,"z":-0}',
        '{"v":0.1,"w":1e-7,"x":1e+21,"y":100000000000000000000,"z":-0}',
        None,
    ),
    ('{"v":1.0e-5,"w":123.456e2}', '{"v":0.00001,"w":12345.6}', None),
    ('{"v":[true,false,null,"s",1,[],{}]}', '{"v":[true,false,null,"s",1,[],{}]}', None),
    ('{"a\\tb\\n":"\\t\\n\\r\\/"}', '{"a\\tb\\n":"\\t\\n\\r/"}', None),
    ('{"é":"é"}', '{"é":"é"}', None),
    ("é", None, "invalid character 'Ã' looking for beginning of value"),
    ("\x85", None, "invalid character 'Â' looking for beginning of value"),
    ('{"a":1}\xa0', None, "invalid character 'Â' after top-level value"),
    ("\x01", None, "invalid character '\\x01' looking for beginning of value"),
    ("\x7f", None, "invalid character '\\x7f' looking for beginning of value"),
    ("'", None, "invalid character '\\'' looking for beginning of value"),
    ('"', None, "unexpected end of JSON input"),
    ("\\", None, "invalid character '\\\\' looking for beginning of value"),
    ('{"a":1}/', None, "invalid character '/' after top-level value"),
    ('{"code":"def f():\n    pass"}', None, "invalid character '\\n' in string literal"),
    ('{"input":"*** Begin Patch\\n*** End Patch"}]', None, "invalid character ']' after top-level value"),
    ('{"path":"src/pipe.py","content":"x"]', None, "invalid character ']' after object key:value pair"),
    ('{"a":"\\u00e9\\u0000"}', '{"a":"é\\u0000"}', None),
    ('{"\\u0000k":1}', '{"\\u0000k":1}', None),
    ('{"k\\u001f":"\\u001f"}', '{"k\\u001f":"\\u001f"}', None),
    ('{"a":{"b":{"c":[1,2,{"d":"e"}]}}}', '{"a":{"b":{"c":[1,2,{"d":"e"}]}}}', None),
    ('  {"a" :  1 ,  "b"  : [ 1 , 2 ] }  ', '{"a":1,"b":[1,2]}', None),
    ('{"a":[1,]}', None, "invalid character ']' looking for beginning of value"),
    ("[1,]", None, "invalid character ']' looking for beginning of value"),
    ("{,}", None, "invalid character ',' looking for beginning of object key string"),
    ('{"a":1,,"b":2}', None, "invalid character ',' looking for beginning of object key string"),
    ("-", None, "invalid character ' ' in numeric literal"),
    ("-0", None, "Value looks like object, but can't find closing '}' symbol"),
    ("0", None, "Value looks like object, but can't find closing '}' symbol"),
    ("00", None, "invalid character '0' after top-level value"),
    ("1.5", None, "Value looks like object, but can't find closing '}' symbol"),
    ('"\\u0000"', None, "Value looks like object, but can't find closing '}' symbol"),
]


@pytest.mark.parametrize(("raw", "written", "error"), GO_CASES)
def test_arguments_round_trip_matches_go(raw, written, error):
    assert parse_arguments(raw) == Arguments(written, error)


@pytest.mark.parametrize(
    ("raw", "error"),
    [
        ("ls -R\n", "invalid character 'l' looking for beginning of value"),
        ('{"input":"x"}]', "invalid character ']' after top-level value"),
        ('{"path":"a","content":"x"]', "invalid character ']' after object key:value pair"),
        ('{"content":"line1\nline2"}', "invalid character '\\n' in string literal"),
        ('{"a":1', "unexpected end of JSON input"),
        ("-", "invalid character ' ' in numeric literal"),
        ("tr", "invalid character ' ' in literal true (expecting 'u')"),
        ('{"a":"\\x"}', "invalid character 'x' in string escape code"),
        ("\u00e9", "invalid character 'Ã' looking for beginning of value"),
        ("{'a':1}", "invalid character '\\'' looking for beginning of object key string"),
        ("[" * 10001, "invalid character '[' exceeded max depth"),
    ],
)
def test_syntax_errors_are_gos_words(raw, error):
    assert syntax_error(raw) == error


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (1.0, "1"),
        (0.5, "0.5"),
        (-0.0, "-0"),
        (1e-7, "1e-7"),
        (1.5e-7, "1.5e-7"),
        (1e-6, "0.000001"),
        (1e20, "100000000000000000000"),
        (1e21, "1e+21"),
        (1.2345e-10, "1.2345e-10"),
        (123456789012345678.0, "123456789012345680"),
    ],
)
def test_floats_are_written_like_go(value, text):
    assert format_float(value) == text


def test_nan_cannot_be_written():
    with pytest.raises(ValueError, match="unsupported value"):
        format_float(float("nan"))


def test_strings_are_html_safe_like_go():
    assert (
        quote('<a href="x">&\u2028\b\x01\x7f\ud800é')
        == '"\\u003ca href=\\"x\\"\\u003e\\u0026\\u2028\\b\\u0001\x7f\ufffdé"'
    )


def test_dumps_keeps_dict_order_and_raw_fragments():
    assert dumps({"b": 1, "a": [True, None, 2.5, Raw('{"x":1}')]}) == '{"b":1,"a":[true,null,2.5,{"x":1}]}'
    with pytest.raises(TypeError):
        dumps(object())


def test_go_any_turns_numbers_into_floats_and_sorts_maps():
    assert (
        dumps(go_any({"z": 1, "a": {"y": 12345678901234567890, "b": "\ud800"}}))
        == '{"a":{"b":"\ufffd","y":12345678901234567000},"z":1}'
    )
