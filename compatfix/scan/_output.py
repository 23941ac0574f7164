"""``compatfix scan``'s arguments and its three outputs: a terminal table, JSON, and
SARIF 2.1.0 for editors and code review."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING, Any

from compatfix.scan import _status

if TYPE_CHECKING:
    from compatfix.scan import Finding, ScanResult

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
_LEVELS = {_status.NOT_FIXED: "error", _status.UNPARSED: "error", _status.CONFLICT: "warning",
           _status.OPT_IN: "warning", _status.CHANGED: "note", _status.FIXED: "note", _status.WORKS: "note", _status.UNKNOWN: "note"}


def parse_arguments(argv: list[str]) -> argparse.Namespace | int:
    """The parsed arguments, or the exit status where argparse already answered (--help: 0,
    a usage error: 2)."""
    parser = argparse.ArgumentParser(
        prog="compatfix scan",
        description="Find, without running it, the code of a repository that today's libraries broke, "
        "and say for each use whether compatfix fixes it here.",
    )
    parser.add_argument("paths", nargs="*", default=["."], metavar="PATH", help="files or folders (default: .)")
    parser.add_argument("--format", choices=("table", "json", "sarif"), default="table",
                        help="output format (default: table)")
    parser.add_argument("--json", dest="format", action="store_const", const="json", help="same as --format json")
    parser.add_argument("--exit-zero", action="store_true", help="exit 0 even when findings need action")
    parser.add_argument("--only-action", action="store_true",
                        help="show only the findings that need action (not those fixed at run time)")
    port = parser.add_mutually_exclusive_group()
    port.add_argument("--diff", action="store_true",
                      help="print a unified diff that ports the mechanical findings (renames, moved imports, "
                      "aliases) for good; apply it with patch -p1 from the first folder. Needs libcst")
    port.add_argument("--write", action="store_true",
                      help="apply that diff to the files in place, and print what changed. Needs libcst")
    try:
        return parser.parse_args(argv)
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else 2


def render(result: ScanResult, args: argparse.Namespace) -> str:
    findings = result.needs_action() if args.only_action else result.findings
    if args.format == "json":
        data = result.to_json()
        if args.only_action:
            data["findings"] = [f for f in data["findings"] if f["needs_action"]]
        return json.dumps(data, indent=2) + "\n"
    if args.format == "sarif":
        return json.dumps(sarif(result, findings), indent=2) + "\n"
    return table(result, findings)


def _what_to_write(finding: Finding) -> str:
    if not finding.replacement:
        return ""
    return ("rename to %s" if finding.mechanical else "instead: %s") % finding.replacement


def table(result: ScanResult, findings: list[Finding]) -> str:
    lines = []
    for f in findings:
        where = "%s:%d:%d" % (f.file, f.line, f.column)
        lines.append("%s  %-9s %s  [%s]" % (where, f.status, f.name or f.kind, f.rule))
        lines.append("    %s" % f.why)
        if f.broke:
            lines.append("    broke: %s" % f.broke)
        if _what_to_write(f):
            lines.append("    %s" % _what_to_write(f))
    counts: dict[str, int] = {}
    for f in result.findings:
        counts[f.status] = counts.get(f.status, 0) + 1
    summary = ", ".join("%d %s" % (counts[s], s) for s in _status.STATUSES if counts.get(s))
    lines.append("%d finding%s in %d Python file%s%s; %d need%s action" % (
        len(result.findings), "" if len(result.findings) == 1 else "s", result.files,
        "" if result.files == 1 else "s", " (%s)" % summary if summary else "",
        len(result.needs_action()), "s" if len(result.needs_action()) == 1 else ""))
    return "\n".join(lines) + "\n"


def sarif(result: ScanResult, findings: list[Finding]) -> dict[str, Any]:
    """A SARIF 2.1.0 log: one rule per shim or inventory entry, one result per finding,
    paths relative to the scanned root (``%SRCROOT%``)."""
    from compatfix import __version__
    from compatfix._messages import docs_link

    rules: dict[str, dict[str, Any]] = {}
    results = []
    for f in findings:
        if f.rule not in rules:
            rules[f.rule] = {
                "id": f.rule,
                "shortDescription": {"text": f.broke or f.why},
                "helpUri": docs_link("scan.md"),
            }
        message = "%s: %s" % (f.name or f.kind, f.why)
        if _what_to_write(f):
            message += ". %s" % _what_to_write(f)
        results.append({
            "ruleId": f.rule,
            "level": _LEVELS[f.status],
            "message": {"text": message},
            "locations": [{"physicalLocation": {
                "artifactLocation": {"uri": f.file, "uriBaseId": "%SRCROOT%"},
                "region": {"startLine": f.line, "startColumn": f.column},
            }}],
            "properties": {"status": f.status, "shim": f.shim, "replacement": f.replacement,
                           "mechanical": f.mechanical, "needsAction": f.needs_action},
        })
    return {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "compatfix", "version": __version__,
                                "informationUri": docs_link("scan.md"), "rules": list(rules.values())}},
            "originalUriBaseIds": {"%SRCROOT%": {"uri": "file://" + result.root.replace("\\", "/").rstrip("/") + "/"}},
            "results": results,
        }],
    }
