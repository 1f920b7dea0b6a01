"""Stylesheets read as rules: the one parser the site steps share (minified CSS, no dependency)."""

from __future__ import annotations


def css_rules(css: str) -> list[str]:
    """The top-level rules of a minified stylesheet (``@``-blocks kept whole), comments apart."""
    rules, depth, start, i = [], 0, 0, 0
    while i < len(css):
        if css.startswith("/*", i):
            end = css.index("*/", i) + 2
            if depth == 0 and not css[start:i].strip():  # a comment between rules is one of them
                rules.append(css[i:end])
                start = end
            i = end
            continue
        char = css[i]
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                rules.append(css[start : i + 1].strip())
                start = i + 1
        i += 1
    return [rule for rule in rules if rule]
