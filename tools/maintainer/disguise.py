"""What a student who copies does to hide it, as functions of a solution file's text.

For the similarity signal's test and measurement (grading/similarity.py): each returns a copy that
still compiles and computes the same (the measurement's --compile checks that with g++), written in
the layout of the project's solutions (clang-format: one statement a line, two spaces an indent).

- renamed: every variable and parameter renamed (generated_class.renamed).
- reordered: adjacent statements that do not depend on each other swapped, functions in reverse order.
- padded: a dead statement after every line of every function body, in one of PAD_STYLES.
- loops_rewritten: every braced `for (init; cond; step) {` loop written as a while loop.
- disguised: all of them at once.
"""
from __future__ import annotations

import re

from maintainer.generated_class import renamed

PAD_STYLES = ("unused", "void", "accumulator", "branch", "mixed")
WORD = re.compile(r"[A-Za-z_]\w*")
DECLARES = re.compile(r"^\s*(?:(?:const|constexpr|static)\s+)*[A-Za-z_][\w:]*(?:<[^;=]*>)?[\s&*]+([a-z_]\w*)\s*[=({;]")
FUNCTION_HEAD = re.compile(r"^[A-Za-z][\w:<>,\s&*]*\b[A-Za-z_]\w*\(")


def _code(line: str) -> str:
    """LINE without its strings' contents and its // comment."""
    return re.sub(r'"(?:[^"\\]|\\.)*"', '""', line).split("//")[0]


def _blocks(lines: list[str]) -> list[tuple[bool, int]]:
    """Per line: whether it ends directly inside a function body or a block of one (not in an
    initializer's braces), and the depth of open parentheses after it."""
    stack: list[str] = []
    head, parens, result = "", 0, []
    for line in lines:
        code = _code(line)
        parens += code.count("(") - code.count(")")
        for at, char in enumerate(code):
            if char == "{":
                before = code[:at].rstrip()
                if "function" in stack:
                    word = re.search(r"(\w+)$", before)
                    kind = "init" if before.endswith(("=", ",", "(", "{")) or (
                        word and word.group(1) not in ("else", "do", "try")) else "block"
                else:
                    words = head.strip()
                    kind = "function" if FUNCTION_HEAD.match(words) and ")" in words and not re.match(
                        r"(namespace|struct|class|enum|union)\b", words) else "other"
                stack.append(kind)
                head = ""
            elif char == "}":
                if stack:
                    stack.pop()
                head = ""
            elif char == ";" and "function" not in stack:
                head = ""
            elif "function" not in stack:
                head += char
        head += " "
        result.append(("function" in stack and stack[-1] in ("function", "block"), parens))
    return result


def _statement_starts(lines: list[str]) -> list[bool]:
    starts, previous = [], ";"
    for line in lines:
        stripped = line.split("//")[0].strip()
        starts.append(bool(stripped) and previous[-1:] in (";", "{", "}", ":"))
        if stripped:
            previous = stripped
    return starts


def padded(text: str, style: str = "mixed") -> str:
    """TEXT with a dead statement after every line of every function body that ends a statement or
    opens a block (not before an `else`, not inside parentheses): STYLE is one of PAD_STYLES."""
    if style not in PAD_STYLES:
        raise ValueError(f"padded: style must be one of {', '.join(PAD_STYLES)}, not {style!r}")
    lines = text.splitlines()
    places = _blocks(lines)
    out: list[str] = []
    count = 0
    for index, line in enumerate(lines):
        out.append(line)
        body, parens = places[index]
        code = line.split("//")[0].rstrip()
        following = next((l.strip() for l in lines[index + 1:] if l.strip()), "")
        if not body or parens != 0 or not code.endswith((";", "{")) or following.startswith("else") \
                or code.strip().startswith(("case ", "default:")) or code.endswith("= {"):
            continue
        count += 1
        indent = re.match(r"\s*", line).group(0) + ("  " if code.endswith("{") else "")
        kind = style if style != "mixed" else PAD_STYLES[(count - 1) % 4]
        if kind == "unused":
            out.append(f"{indent}int pad_{count} = {count};")
        elif kind == "void":
            out.append(f"{indent}(void){count};" if count % 2 else f"{indent}static_cast<void>({count});")
        elif kind == "branch":
            out.append(f"{indent}if (false) {{ int pad_{count} = {count}; (void)pad_{count}; }}")
        else:  # accumulator: a local written twice and never read
            out.append(f"{indent}double pad_total_{count} = {count};")
            out.append(f"{indent}pad_total_{count} += pad_total_{count} * 2.0;")
    return "\n".join(out) + "\n"


def reordered(text: str) -> str:
    """TEXT with each run of adjacent one-line statements that do not depend on each other reversed
    (declarations, calls), and its top-level functions in reverse order when it has several."""
    lines = text.splitlines()
    starts = _statement_starts(lines)
    places = _blocks(lines)
    index = 0
    while index < len(lines) - 1:
        a, b = lines[index], lines[index + 1]
        if _swappable(a, b, places[index], places[index + 1], starts[index], starts[index + 1]):
            lines[index], lines[index + 1] = b, a
            index += 2
        else:
            index += 1
    return _functions_reversed("\n".join(lines) + "\n")


def _swappable(a: str, b: str, place_a, place_b, start_a: bool, start_b: bool) -> bool:
    """Two adjacent one-line declarations of a function body, neither using what the other declares
    nor drawing random numbers, can change places."""
    code_a, code_b = _code(a).rstrip(), _code(b).rstrip()
    if not (place_a[0] and place_b[0] and start_a and start_b and place_a[1] == 0 and place_b[1] == 0):
        return False
    if not (code_a.endswith(";") and code_b.endswith(";")) or len(a) - len(a.lstrip()) != len(b) - len(b.lstrip()):
        return False
    if any(re.match(r"\s*(return|throw|break|continue|if|for|while|else|do|case|default|using)\b", c)
           or "{" in c or "}" in c or re.search(r"rng|Rng", c) for c in (code_a, code_b)):
        return False
    declared_a, declared_b = DECLARES.match(code_a), DECLARES.match(code_b)
    if not (declared_a and declared_b):
        return False
    return declared_a.group(1) not in WORD.findall(code_b) and declared_b.group(1) not in WORD.findall(code_a)


def _functions_reversed(text: str) -> str:
    """TEXT with each run of top-level function definitions (in one namespace, nothing else between
    them but blank lines) in reverse order, each declared first so that a caller before its callee
    still compiles."""
    lines = text.splitlines()
    functions: list[tuple[int, int]] = []
    start = None
    for index, line in enumerate(lines):
        if start is None and FUNCTION_HEAD.match(line) and not line.startswith("namespace"):
            start = index - 1 if index and lines[index - 1].startswith("template") else index
        elif start is not None and line.startswith("}"):
            functions.append((start, index))
            start = None
    runs: list[list[tuple[int, int]]] = []
    for function in functions:
        if runs and all(not lines[i].strip() or lines[i].startswith("//")
                        for i in range(runs[-1][-1][1] + 1, function[0])):
            runs[-1].append(function)
        else:
            runs.append([function])
    for run in reversed([r for r in runs if len(r) > 1]):
        chunks = ["\n".join(lines[a:b + 1]) for a, b in run]
        heads = []
        for a, _ in run:
            head = []
            for line in lines[a:]:
                head.append(line.strip())
                if "{" in line:
                    break
            heads.append(" ".join(head).split("{")[0].strip() + ";")
        lines[run[0][0]:run[-1][1] + 1] = ("\n".join(heads) + "\n\n" + "\n\n".join(reversed(chunks))).splitlines()
    return "\n".join(lines) + "\n"


FOR_LOOP = re.compile(r"^(\s*)for \(([^;()]*(?:\([^()]*\))?[^;()]*); ([^;]+); ([^;()]+(?:\([^()]*\))?)\) \{$")


def loops_rewritten(text: str) -> str:
    """TEXT with every braced one-line-headed `for (init; cond; step) {` whose body has no `continue`
    written as `{ init; while (cond) { body step; } }`."""
    lines = text.splitlines()
    out: list[str] = []
    index = 0
    while index < len(lines):
        match = FOR_LOOP.match(lines[index])
        if not match:
            out.append(lines[index])
            index += 1
            continue
        indent, init, condition, step = match.groups()
        depth, end = 1, index + 1
        while end < len(lines) and depth:
            code = lines[end].split("//")[0]
            depth += code.count("{") - code.count("}")
            end += 1
        body = lines[index + 1:end - 1]
        if any(re.search(r"\bcontinue\b", l) for l in body) or not lines[end - 1].strip().startswith("}"):
            out.append(lines[index])
            index += 1
            continue
        out.append(f"{indent}{{")
        out.append(f"{indent}  {init};")
        out.append(f"{indent}  while ({condition}) {{")
        out.extend("  " + line if line.strip() else line for line in loops_rewritten("\n".join(body)).splitlines())
        out.append(f"{indent}    {step};")
        out.append(f"{indent}  }}")
        out.append(f"{indent}}}" + lines[end - 1].strip()[1:])
        index = end
    return "\n".join(out) + "\n"


def disguised(text: str) -> str:
    """Every disguise at once: renamed, reordered, loops rewritten, padded (mixed)."""
    return padded(loops_rewritten(reordered(renamed(text, "alt"))), "mixed")


DISGUISES = {"renamed": lambda t: renamed(t, "alt"), "reordered": reordered, "loops rewritten": loops_rewritten,
             **{f"padded ({style})": (lambda s: lambda t: padded(t, s))(style) for style in PAD_STYLES},
             "all at once": disguised}
