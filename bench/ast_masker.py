"""Baseline for `npm run bench`: the same masking work as lmr's tree-sitter masker, done with Python's ast.

Reads a job (JSON) on stdin:
  {"files": [path, ...], "pairs": [[file_index, qualname, def_line], ...],
   "cache": bool,     # parse each file once (true) or once per pair (false)
   "verify": "none" | "changed" | "full",
                      # re-parse the masked definition alone (at its indentation,
                      # behind "if 1:"), as the TS masker's default does, or the whole result
   "digests": bool}   # after timing, hash every output (untimed) to compare with TS
Writes {"pairs", "seconds", "failures", "digests"?} on stdout. Only the masking loop
is timed: reading files and starting the interpreter are not.

Per pair, like the TS masker: parse (or reuse the cached tree and index), index
every def by qualified name (defs inside if/try/with/for/while/match count in the
enclosing scope), locate the def by (name, line), splice the body (keep signature
and docstring; TODO comment + raise at the body indentation), optionally check
that the result parses. Comments are invisible to ast, so comment lines that
trail the last statement stay here while the TS masker masks them.
"""
import ast
import hashlib
import json
import sys
import time

SCOPES = (ast.If, ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith, ast.Try, getattr(ast, "TryStar", ast.Try))
DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
RAISE = "raise NotImplementedError"


def index_defs(stmts, prefix, out):
    for s in stmts:
        if isinstance(s, DEFS):
            q = prefix + s.name
            out[(q, s.lineno)] = s
            index_defs(s.body, q + ".", out)
        elif isinstance(s, SCOPES):
            for field in ("body", "orelse", "finalbody"):
                index_defs(getattr(s, field, []), prefix, out)
            for h in getattr(s, "handlers", []):
                index_defs(h.body, prefix, out)
        elif isinstance(s, ast.Match):
            for c in s.cases:
                index_defs(c.body, prefix, out)
    return out


def char_col(line, byte_col):
    # ast columns are UTF-8 byte offsets
    return byte_col if line.isascii() else len(line.encode("utf-8")[:byte_col].decode("utf-8"))


def leading_ws(line):
    return line[: len(line) - len(line.lstrip(" \t\f"))]


def eol_of(line):
    return "\r\n" if line.endswith("\r\n") else "\n"


def indent_unit(lines, defs):
    for fn in defs.values():
        first = fn.body[0]
        if first.lineno > fn.lineno:
            outer, inner = leading_ws(lines[fn.lineno - 1]), leading_ws(lines[first.lineno - 1])
            if len(inner) > len(outer) and inner.startswith(outer):
                return inner[len(outer):]
    return "    "


def mask(lines, offsets, source, fn, qualname, unit):
    """The masked source and the span [start, end) of the masked definition in it."""
    body = fn.body
    first, last = body[0], body[-1]
    doc = first if ast.get_docstring(fn, clean=False) is not None else None
    first_line = lines[first.lineno - 1]
    start_col = char_col(first_line, first.col_offset)
    eol = eol_of(lines[fn.lineno - 1])
    todo = "# TODO: implement " + qualname
    end_row = last.end_lineno - 1
    end_col = char_col(lines[end_row], last.end_col_offset)
    if first_line[:start_col].strip():
        # body on the header line: restart it on fresh lines after the colon
        row = first.lineno - 1
        col = len(first_line[:start_col].rstrip())
        ind = leading_ws(lines[fn.lineno - 1]) + unit
        doc_text = ""
        if doc is not None:
            doc_text = eol + ind + lines[row][start_col:char_col(lines[doc.end_lineno - 1], doc.end_col_offset)]
        text = doc_text + eol + ind + todo + eol + ind + RAISE
    elif doc is not None:
        row = doc.end_lineno - 1
        col = char_col(lines[row], doc.end_col_offset)
        ind = leading_ws(first_line)
        text = eol + ind + todo + eol + ind + RAISE
    else:
        # a decorated def starts at its first decorator, not at the line ast reports
        decorators = getattr(first, "decorator_list", None)
        row, col = (decorators[0].lineno if decorators else first.lineno) - 1, 0
        ind = leading_ws(first_line)
        text = ind + todo + eol + ind + RAISE
    start = offsets[row] + col
    end = offsets[end_row] + end_col
    out = source[:start] + text + source[end:]
    decorators = fn.decorator_list
    def_start = offsets[(decorators[0].lineno if decorators else fn.lineno) - 1]
    return out, def_start, end + len(out) - len(source)


def verify_changed(out, start, end):
    piece = out[start:end]
    ast.parse("if 1:\n" + piece if piece[:1] in (" ", "\t", "\f") else piece)


def load(source):
    tree = ast.parse(source)
    # split on "\n" only: str.splitlines also breaks at form feeds and other characters ast does not count
    lines = [line + "\n" for line in source.split("\n")]
    lines[-1] = lines[-1][:-1]
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))
    defs = index_defs(tree.body, "", {})
    return lines, offsets, defs, indent_unit(lines, defs)


def run(sources, pairs, cache, verify, collect=None):
    parsed = {}
    failures = 0
    for file_index, qualname, line in pairs:
        entry = parsed.get(file_index) if cache else None
        if entry is None:
            entry = load(sources[file_index])
            if cache:
                parsed[file_index] = entry
        lines, offsets, defs, unit = entry
        fn = defs.get((qualname, line))
        if fn is None or isinstance(fn, ast.ClassDef):
            failures += 1
            continue
        source = sources[file_index]
        out, start, end = mask(lines, offsets, source, fn, qualname, unit)
        try:
            if verify == "changed":
                verify_changed(out, start, end)
            elif verify == "full":
                ast.parse(out)
        except SyntaxError:
            failures += 1
        if collect is not None:
            collect.append(hashlib.sha256(out.encode("utf-8")).hexdigest())
    return failures


def main():
    job = json.load(sys.stdin)
    sources = []
    for path in job["files"]:
        with open(path, encoding="utf-8", newline="") as fh:
            sources.append(fh.read())
    pairs = [tuple(p) for p in job["pairs"]]
    started = time.perf_counter()
    failures = run(sources, pairs, job.get("cache", True), job.get("verify", "changed"))
    seconds = time.perf_counter() - started
    result = {"pairs": len(pairs), "seconds": seconds, "failures": failures}
    if job.get("digests"):
        digests = []
        run(sources, pairs, True, "none", digests)
        result["digests"] = digests
    json.dump(result, sys.stdout)


if __name__ == "__main__":
    main()
