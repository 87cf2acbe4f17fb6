"""PrairieLearn's "Upload question scores" replayed on one file: the parsing and row rules of
PrairieLearn/PrairieLearn at 88fb8556a7a1768e2082736be9095241b11238d7 (apps/prairielearn/src/lib/
csv.ts and score-upload.ts), written anew here in Python (not PrairieLearn's code), each rule citing
the lines it replays. PrairieLearn parses with Node's csv-parse; Python's csv module reads the
same quoting (RFC 4180: '"' quotes, '""' inside), which is all our files use.

replay(text, course) -> a list with one entry per data row: {"line", "record", "outcome" ("updated",
"skipped" or "error"), "error", "instance_question", "score_perc", "feedback"}. COURSE is what the
assessment holds: {"instance_questions": [{"id": 1, "uid": "...", "instance": 1, "qid": "...",
"sharing_name": null}]}.
"""
from __future__ import annotations

import csv
import io
import math
import re

INTEGER_COLUMNS = ("instance",)                      # score-upload.ts line 70
FLOAT_COLUMNS = ("score_perc", "points", "manual_score_perc", "manual_points", "auto_score_perc",
                 "auto_points")                       # score-upload.ts lines 71-78
_INT = re.compile(r"\s*([+-]?\d+)")
_FLOAT = re.compile(r"\s*([+-]?(?:Infinity|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?))")


def parse_int(text: str) -> float:
    """JavaScript's Number.parseInt(text) (base 10): its leading integer, NaN without one."""
    found = _INT.match(text)
    return int(found.group(1)) if found else math.nan


def parse_float(text: str) -> float:
    """JavaScript's Number.parseFloat(text): its leading number, NaN without one."""
    found = _FLOAT.match(text)
    return float(found.group(1).replace("Infinity", "inf")) if found else math.nan


def records(text: str) -> list[tuple[int, dict]]:
    """csv.ts lines 5-40: the header row names the columns (lower case, line 32), a byte-order mark
    goes (line 8), values are trimmed (line 9), empty lines skipped (line 10), rows may have other
    lengths than the header (line 11), '' is null (line 31), the integer and float columns cast
    (lines 34-35)."""
    if text.startswith("\ufeff"):
        text = text[1:]
    reader = csv.reader(io.StringIO(text, newline=""))
    header = None
    found = []
    for row in reader:
        if not any(cell.strip() for cell in row) and len(row) <= 1:
            continue
        cells = [cell.strip() for cell in row]
        if header is None:
            header = [cell.lower() if cell != "" else None for cell in cells]
            continue
        record = {}
        for name, value in zip(header, cells):
            if name is None:
                continue
            if value == "":
                record[name] = None
            elif name in INTEGER_COLUMNS:
                record[name] = parse_int(value)
            elif name in FLOAT_COLUMNS:
                record[name] = parse_float(value)
            else:
                record[name] = value
        found.append((reader.line_num, record))
    return found


def numeric(record: dict, key: str):
    """score-upload.ts lines 187-193 (validateNumericColumn)."""
    value = record.get(key)
    if value is not None and (not isinstance(value, (int, float)) or isinstance(value, bool) or math.isnan(value)):
        raise ValueError(f"Value of {key} is not a numeric value")
    return value


def replay(text: str, course: dict) -> list[dict]:
    out = []
    for line, record in records(text):                   # score-upload.ts lines 82-95: row by row
        entry = {"line": line, "record": record, "outcome": None, "error": None}
        try:
            uid_or_group = record.get("group_name") or record.get("uid")   # line 247
            qid_text = record.get("qid")
            if isinstance(qid_text, str) and qid_text.startswith("@"):      # lines 253-257
                sharing_name, _, qid = qid_text[1:].partition("/")
            else:
                sharing_name, qid = None, qid_text
            matches = [iq for iq in course["instance_questions"]            # score-upload.sql lines 27-68
                       if record.get("submission_id") is None and iq["uid"] == uid_or_group
                       and iq["instance"] == record.get("instance") and iq["qid"] == qid
                       and (sharing_name is None or iq.get("sharing_name") == sharing_name)]
            if not matches:                                                 # lines 279-283
                raise ValueError(f"Could not locate submission with id={record.get('submission_id')}, "
                                 f"instance={record.get('instance')}, uid/group={uid_or_group}, "
                                 f"qid={record.get('qid')} for this assessment.")
            new_score = {"score_perc": numeric(record, "score_perc"), "points": numeric(record, "points"),
                         "feedback": {"manual": record["feedback"]} if record.get("feedback") is not None else None}
            entry["instance_question"] = matches[0]["id"]                   # lines 302-311
            if any(value is not None for value in new_score.values()):      # lines 312-324
                entry.update(outcome="updated", score_perc=new_score["score_perc"],
                             feedback=new_score["feedback"] and new_score["feedback"]["manual"])
            else:
                entry["outcome"] = "skipped"
        except ValueError as error:
            entry.update(outcome="error", error=str(error))
        out.append(entry)
    return out
