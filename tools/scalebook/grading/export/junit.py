"""A submission's report as JUnit XML, for an LMS."""
from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from ...files import atomic_write
from ...verdicts import ERRORS, safe_text


def write_junit(report: dict, path: Path) -> None:
    """JUnit for an LMS. Every string is safe_text already (no character XML 1.0 cannot hold)."""
    suite = ET.Element("testsuite", name=report["submission"], tests=str(len(report["tests"])),
                       failures=str(sum(t["status"] == "failed" for t in report["tests"])),
                       errors=str(sum(t["status"] in ERRORS for t in report["tests"])))
    if "seconds" in report:  # a student's view has none (grading/hidden.py: time tells hidden inputs)
        suite.set("time", str(report["seconds"]))
    properties = ET.SubElement(suite, "properties")
    ET.SubElement(properties, "property", name="score", value=str(report["score"]))
    ET.SubElement(properties, "property", name="max_score", value=str(report["max_score"]))
    for test in report["tests"]:
        # A chapter's hidden checks shown as a count (grading/hidden.py) have no exercise.
        case = ET.SubElement(suite, "testcase", classname=f"{test['chapter']}.{test['exercise'] or 'hidden'}",
                             name=test["name"])
        case_properties = ET.SubElement(case, "properties")
        ET.SubElement(case_properties, "property", name="points", value=str(test["points"]))
        ET.SubElement(case_properties, "property", name="max_points", value=str(test["max_points"]))
        if test["status"] == "failed":
            ET.SubElement(case, "failure", message=safe_text(test["message"]), type="failed")
        elif test["status"] != "passed":
            ET.SubElement(case, "error", message=safe_text(test["message"]), type=test["status"])
    atomic_write(path, ET.tostring(suite, encoding="utf-8", xml_declaration=True))
