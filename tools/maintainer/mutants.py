"""A file's one-token mutants, found with libclang's lexer (python3-clang), for ./workbook mutate."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

try:
    import clang.cindex as cindex
except ImportError:  # pragma: no cover - named in the error below
    cindex = None

SWAPS = {"<": ["<="], "<=": ["<"], ">": [">="], ">=": [">"], "==": ["!=", "<=", ">="], "!=": ["=="],
         "+": ["-"], "-": ["+"], "*": ["/"], "/": ["*"], "&&": ["||"], "||": ["&&"],
         "+=": ["-="], "-=": ["+="], "*=": ["/="], "/=": ["*="],
         "true": ["false"], "false": ["true"], "min": ["max"], "max": ["min"]}
# The cursors of an operator token that is an operator (not a template's <> or a pointer's *).
OPERATORS = set()  # filled once clang.cindex is imported
# '<' after these, or '<' and '>' next to these, open and close template arguments.
TEMPLATES = {"vector", "pair", "array", "numeric_limits", "optional", "function", "Matrix", "Map"}
TYPES = {"double", "float", "int", "long", "bool", "char", "unsigned", "Index", "size_t", "int64_t",
         "uint64_t", "uint8_t", "Matrix", "Vector", "RowVector", "BoolMatrix", "std", "Eigen", "Fold"}
# Algorithms whose ties another one breaks differently (sort stability).
UNSTABLE = {"stable_sort": "sort", "lower_bound": "upper_bound", "upper_bound": "lower_bound"}
# Wide integer types a count is kept in, narrowed to int by the "narrowed" operator.
WIDE = {"Count", "int64_t"}
# Where a '-' is a sign, not a subtraction: after these tokens.
BEFORE_SIGN = {"(", "=", ",", "return", "{", "?", ":", "*", "/", "+", "-", "<", ">", "<=", ">=", "=="}


@dataclass
class Mutant:
    file: str       # file name in solutions/NN-topic/
    line: int
    column: int
    start: int      # byte offsets in the file
    end: int
    original: str
    mutated: str
    what: str

    @property
    def key(self) -> str:
        return f"{self.file}:{self.line}:{self.column} {self.original} -> {self.mutated or '(deleted)'}"


def loop_conditions(tokens: list) -> set[int]:
    """The indices of the tokens of every for statement's condition (between the two ';' of its
    parentheses)."""
    found = set()
    for i, token in enumerate(tokens):
        if token.spelling == "for" and i + 1 < len(tokens) and tokens[i + 1].spelling == "(":
            depth, semicolons = 0, []
            for j in range(i + 1, len(tokens)):
                s = tokens[j].spelling
                depth += s == "("
                depth -= s == ")"
                if s == ";" and depth == 1:
                    semicolons.append(j)
                if depth == 0:
                    break
            if len(semicolons) == 2:
                found.update(range(semicolons[0] + 1, semicolons[1]))
    return found


def operator_mutants(token, previous: str, following: str, in_loop_condition: bool, add) -> None:
    """An operator token's mutants: exchanged, made strict, a sign dropped, a loop bound one short
    (none for a template's <> or a declarator's *)."""
    text = token.spelling
    if token.cursor.kind not in OPERATORS:
        return  # the parser says it is no operator here: a template's <>, a declarator's *
    if (text == "<" and (previous in TEMPLATES or previous.endswith("_cast") or following in TYPES)) or \
            (text == ">" and previous in TYPES):
        return  # a template argument list, not a comparison
    if text == "-" and previous in BEFORE_SIGN:
        add("", "sign dropped")
        return
    for mutated in SWAPS[text]:
        add(mutated, "operator exchanged" if text != "==" or mutated == "!=" else "equality made an ordering")
    if text in ("<", "<=") and in_loop_condition:
        add(f"+ 1 {text}", "loop bound one short")


def literal_mutants(text: str, add) -> None:
    """A number's mutants: an integer moved by one, a floating constant nudged, and a tolerance or a
    sentinel moved tenfold."""
    number = text.rstrip("uUlLfF")
    if all(c.isdigit() for c in number):
        value = int(number)
        add(str(value + 1), "constant plus one")
        if value > 0:
            add(str(value - 1), "constant minus one")
        return
    try:
        value = float(number)
    except ValueError:
        return
    add(repr(value * 1.01 if value else 1e-9), "constant nudged")
    if value and (abs(value) < 1e-3 or abs(value) >= 1e6):  # a tolerance or a sentinel
        add(repr(value * 10), "boundary constant moved by 10")
        add(repr(value / 10), "boundary constant moved by 10")


def name_mutants(tokens: list, i: int, path: Path, add, out: list[Mutant]) -> None:
    """The mutants of keyword and identifier token I: booleans, min/max, abs removed, stable order,
    infinity, double narrowed to float, a wide count narrowed to int."""
    token = tokens[i]
    text, kind = token.spelling, token.kind
    previous = tokens[i - 1].spelling if i else ""
    following = tokens[i + 1].spelling if i + 1 < len(tokens) else ""
    end = token.extent.end.offset

    def whole_name(original: str, mutated: str, what: str) -> None:  # std::NAME, from std on
        out.append(Mutant(path.name, token.location.line, tokens[i - 2].location.column,
                          tokens[i - 2].extent.start.offset, end, original, mutated, what))

    if kind == cindex.TokenKind.KEYWORD and text in ("true", "false"):
        add(SWAPS[text][0], "boolean flipped")
    elif kind == cindex.TokenKind.IDENTIFIER and text in ("min", "max") and previous == "::":
        add(SWAPS[text][0], "min and max exchanged")
    elif kind == cindex.TokenKind.IDENTIFIER and text in ("abs", "fabs") and following == "(":
        if previous == "::" and i >= 2 and tokens[i - 2].spelling == "std":
            whole_name("std::" + text, "", "abs removed")
    elif kind == cindex.TokenKind.IDENTIFIER and text in UNSTABLE and previous == "::":
        add(UNSTABLE[text], "stable order of ties lost")
    elif kind == cindex.TokenKind.IDENTIFIER and text == "infinity" and previous == "::" and following == "(":
        add("max", "infinity made a finite sentinel")
    elif kind == cindex.TokenKind.KEYWORD and text == "double" and i + 1 < len(tokens) and \
            tokens[i + 1].kind == cindex.TokenKind.IDENTIFIER:
        add("float", "narrowed to float")
    elif kind == cindex.TokenKind.IDENTIFIER and text in WIDE and i + 1 < len(tokens) and \
            tokens[i + 1].kind == cindex.TokenKind.IDENTIFIER and following not in TYPES and \
            i + 2 < len(tokens) and tokens[i + 2].spelling in ("=", ";", ",", "{", "("):
        if previous == "::" and i >= 2:  # std::int64_t: the whole name becomes int
            whole_name(tokens[i - 2].spelling + "::" + text, "int", "narrowed to int")
        else:
            add("int", "narrowed to int")


def mutants_of(path: Path, include_dirs: list[str]) -> list[Mutant]:
    """Every mutant of one file, from its tokens."""
    index = cindex.Index.create()
    unit = index.parse(str(path), args=["-x", "c++", "-std=c++20", *[f"-I{d}" for d in include_dirs]])
    tokens = [t for t in unit.get_tokens(extent=unit.cursor.extent)
              if t.location.file and Path(t.location.file.name) == path]
    out: list[Mutant] = []
    in_body = False
    loop_condition = loop_conditions(tokens)
    for i, token in enumerate(tokens):
        text, kind = token.spelling, token.kind
        if kind == cindex.TokenKind.COMMENT:
            continue
        if text == "{":
            in_body = True  # nothing before the first body: includes, namespaces, declarations
        if not in_body:
            continue

        def add(mutated: str, what: str, token=token) -> None:
            out.append(Mutant(path.name, token.location.line, token.location.column, token.extent.start.offset,
                              token.extent.end.offset, token.spelling, mutated, what))

        if kind == cindex.TokenKind.PUNCTUATION and text in SWAPS:
            operator_mutants(token, tokens[i - 1].spelling if i else "",
                             tokens[i + 1].spelling if i + 1 < len(tokens) else "", i in loop_condition, add)
        elif kind == cindex.TokenKind.LITERAL and text[:1].isdigit():
            literal_mutants(text, add)
        else:
            name_mutants(tokens, i, path, add, out)
    return out
