"""JUnit XML, one testcase per check: read by GitLab, Jenkins, Buildkite, Azure Pipelines.

JUnit has no "warning": a warning is a passing testcase whose <system-out> says WARNING, or a
<failure> under --strict. A crashed check is an <error>; a skipped check is <skipped>.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from ..model import Report, Status
from ..text import t
from ._escape import for_terminal as _x
from ._escape import no_commands


def _text(r) -> str:
    """Message, details and fix, one line each: every field escaped (render/_escape.py), so the
    document holds only XML 1.0 characters and the line breaks are flexdoctor's."""
    lines = [_x(r.message), *(_x(d) for d in r.details)]
    if r.fix:
        lines += [f"{t('report.fix')}: {_x(r.fix.summary)}", *(f"  $ {_x(c)}" for c in r.fix.commands)]
    return "\n".join(lines)


def render(report: Report, **_: object) -> str:
    counts = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    suite = ET.Element("testsuite", name="flexdoctor")
    if report.settings is not None:  # which settings file judged the run (JUnit properties come first)
        props = ET.SubElement(suite, "properties")
        ET.SubElement(props, "property", name="settings", value=report.settings.path or "")
        ET.SubElement(props, "property", name="settings.source", value=report.settings.source)
        for n in report.settings.notes:
            ET.SubElement(props, "property", name=f"settings.{n.kind}", value=f"{n.path}: {n.reason}")
    for r in report.results:
        counts["tests"] += 1
        case = ET.SubElement(suite, "testcase", classname=_x(f"flexdoctor.{r.area}"),
                             name=_x(f"{r.id} {r.symbol}: {r.title}"))
        if r.status == Status.ERROR:
            counts["errors"] += 1
            ET.SubElement(case, "error", message=_x(r.message), type="error").text = _text(r)
        elif report.fails(r):
            counts["failures"] += 1
            ET.SubElement(case, "failure", message=_x(r.message), type=r.status.value).text = _text(r)
        elif r.status == Status.SKIP:
            counts["skipped"] += 1
            ET.SubElement(case, "skipped", message=_x(r.message))
        elif r.status == Status.WARN:
            ET.SubElement(case, "system-out").text = t("markdown.junit_warning", text=_text(r))
        elif r.status == Status.NOTE:
            ET.SubElement(case, "system-out").text = t("levels.junit_note", text=_text(r))
        else:
            ET.SubElement(case, "system-out").text = _x(r.message)
    for k, v in counts.items():
        suite.set(k, str(v))
    host = report.facts.host
    if host is not None and getattr(host, "hostname", None) is not None:
        suite.set("hostname", _x(host.hostname))
    root = ET.Element("testsuites", name="flexdoctor", **{k: str(v) for k, v in counts.items()})
    root.append(suite)
    ET.indent(root)
    return no_commands('<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n")
