"""codegen.render.fill: the one template filler of every generator."""
import pytest

from tiling.render import fill


def test_fields_are_filled_and_python_braces_stay_literal():
    assert fill("x = {'$key': ${value}1}", key="a", value=2) == "x = {'a': 21}"


def test_a_missing_field_is_named():
    with pytest.raises(KeyError, match=r"\$second"):
        fill("$first $second", first=1)


def test_an_unused_field_is_named():
    with pytest.raises(TypeError, match="'third'"):
        fill("$first", first=1, third=3)


def test_a_stray_dollar_is_refused():
    with pytest.raises(ValueError, match="not a field"):
        fill("cost: $ 5 and $name", name="x")


def test_a_value_of_several_lines_continues_at_its_lines_indentation():
    template = "def f():\n    for c in range(2):\n        $body\n    return 0\n"
    body = "if c:\n    g(c)\n\nelse:\n    h()"
    assert fill(template, body=body) == ("def f():\n    for c in range(2):\n        if c:\n            g(c)\n\n"
                                         "        else:\n            h()\n    return 0\n")
