"""The one template filler every generator renders its code with.

A generator builds what varies (names, numbers, expressions, lists of
lines) first and fills a template with it once; nothing edits generated
code as text afterwards.
"""
from __future__ import annotations

from string import Template


def fill(template: str, **fields: object) -> str:
    """string.Template's $name / ${name} fields (the generated code's own braces, in dicts, sets and
    f-strings, stay literal), each filled with str(value); a field missing from `fields`, a field the
    template lacks, or a stray $ is an error that names it. A value of several lines continues at
    the indentation of the line its field stands on (blank lines stay blank)."""
    text = Template(template)
    if not text.is_valid():
        raise ValueError(f"template has a $ that is not a field (write a field as $name or ${{name}}): "
                         f"{template[:80]!r}...")
    wanted = set(text.get_identifiers())
    missing, unused = sorted(wanted - fields.keys()), sorted(fields.keys() - wanted)
    if missing:
        raise KeyError(f"template field ${missing[0]} has no value (fields given: {', '.join(sorted(fields))})")
    if unused:
        raise TypeError(f"field {unused[0]!r} is not in the template (its fields: {', '.join(sorted(wanted))})")
    values = {name: str(value).split("\n") for name, value in fields.items()}
    if all(len(value) == 1 for value in values.values()):
        return text.substitute({name: value[0] for name, value in values.items()})
    return "".join(_fill_line(line, values) for line in template.splitlines(keepends=True))


def _fill_line(line: str, values: dict[str, list[str]]) -> str:
    """One template line filled, the later lines of a value indented as the line is."""
    pad = line[:len(line) - len(line.lstrip(" "))]
    return Template(line).substitute({name: "\n".join([first, *(pad + rest if rest else rest for rest in later)])
                                      for name, (first, *later) in values.items()})
