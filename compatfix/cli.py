"""The ``compatfix`` command: ``list``, ``doctor`` and ``run``.

``compatfix list`` shows every shim and whether it applies to this environment (and if
not, why not), without importing any target library.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Iterable

from compatfix import _decision
from compatfix._engine import DEVICES, Settings
from compatfix.registry import BEFORE_CONSUMER, Shim, all_shims


def shim_status(shim: Shim, settings: Settings, shims: Iterable[Shim] = ()) -> tuple[bool, str]:
    """Whether ``shim`` would apply in this environment, and why (not): the engine's own
    decision (``compatfix._decision.decide``)."""
    by_name = {other.name: other for other in shims}
    return _decision.decide(shim, settings, by_name.get)


def source_of(shim: Shim) -> str:
    """``path:line`` of the shim's record, relative to the folder holding the package."""
    path, _, line = shim.source.rpartition(":")
    root = os.path.dirname(os.path.dirname(os.path.abspath(_decision.__file__)))
    if os.path.abspath(path).startswith(root + os.sep):
        path = os.path.relpath(path, root)
    return "%s:%s" % (path.replace(os.sep, "/"), line)


def shim_rows(shims: list[Shim], settings: Settings) -> list[dict]:
    rows = []
    for shim in shims:
        applies, why = shim_status(shim, settings, shims)
        rows.append(
            {
                "name": shim.name,
                "kind": shim.kind,
                "targets": list(shim.targets),
                "consumers": list(shim.consumers),
                "restores": sorted(shim.restores),
                "requires": shim.requires,
                "risk": shim.risk,
                "default": shim.default,
                "device": shim.device,
                "applies": applies,
                "why": why,
                "broke": shim.broke,
                "summary": shim.summary,
                "origin": shim.origin,
                "source": source_of(shim),
            }
        )
    return rows


def format_rows(rows: list[dict]) -> str:
    lines = []
    for row in rows:
        where = ", ".join(row["targets"])
        if row["kind"] == BEFORE_CONSUMER:
            where += " (before %s)" % ", ".join(row["consumers"])
        if row["restores"]:
            where += " (at the first use of a name it restores)"
        mark = "applies" if row["applies"] else "-"
        lines.append("%-26s %-8s %s" % (row["name"], mark, row["summary"]))
        lines.append("%-26s %-8s %s %s; %s%s" % (
            "", "", row["kind"], where, row["why"],
            "" if row["default"] else "; off by default",
        ))
        lines.append("%-26s %-8s defined at %s" % ("", "", row["source"]))
    return "\n".join(lines)


def catalogue_markdown(shims: list[Shim]) -> str:
    """The shim catalogue page of the docs, generated from the registry."""
    out = [
        "# Shim catalogue",
        "",
        "Generated from the registry by `compatfix list --markdown`; do not edit by hand.",
        "`compatfix list` shows which of these apply to your environment.",
        "",
    ]
    for shim in shims:
        out += [
            "## `%s`" % shim.name,
            "",
            shim.summary[0].upper() + shim.summary[1:] + ".",
            "",
            "- What broke: %s" % shim.broke,
            "- Kind: `%s` on %s%s" % (
                shim.kind,
                ", ".join("`%s`" % t for t in shim.targets),
                " before %s runs" % ", ".join("`%s`" % c for c in shim.consumers) if shim.consumers else
                ", applied at the first use of a name it restores (%s)" % ", ".join(
                    "`%s`" % name for name in sorted(shim.restores)) if shim.restores else "",
            ),
            "- Applies when: %s" % (
                ", ".join("%s `%s`" % item for item in shim.requires.items()) or "always"),
            "- Defined at: `%s`" % source_of(shim),
            "- Risk: %s; %s by default%s" % (
                shim.risk, "on" if shim.default else "off",
                "; only with `--device %s`" % shim.device if shim.device else ""),
            "",
        ]
    return "\n".join(out)


def cmd_list(args: argparse.Namespace) -> int:
    shims, problems = all_shims(DEVICES)
    for problem in problems:
        print("compatfix: %s" % problem, file=sys.stderr)
    if args.markdown:
        print(catalogue_markdown([s for s in shims if s.origin == "compatfix"]), end="")
        return 0
    settings = Settings.from_environ()
    for problem in settings.problems + settings.unknown_names(s.name for s in shims):
        print("compatfix: %s" % problem, file=sys.stderr)
    rows = shim_rows(shims, settings)
    if args.json:
        json.dump(rows, sys.stdout, indent=2)
        print()
    else:
        print(format_rows(rows))
    return 0


def cmd_doctor(args: argparse.Namespace) -> int:
    from compatfix import doctor

    findings = doctor.run_checks()
    print(doctor.format_findings(findings))
    return 1 if any(finding.severity == "error" for finding in findings) else 0


def cmd_sitecustomize_path(args: argparse.Namespace) -> int:
    import os

    print(os.path.join(os.path.dirname(os.path.abspath(__file__)), "sitecustomize"))
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["run"]:
        from compatfix._runner import main as run_main

        return run_main(argv[1:])
    parser = argparse.ArgumentParser(
        prog="compatfix",
        description="Run 2020-22 deep-learning research code unmodified on today's stack.",
        epilog="To run a program with compatfix: compatfix run [options] script.py args... "
        "(or python -m compatfix [options] script.py args...).",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    listing = commands.add_parser("list", help="every shim, and whether it applies here")
    listing.add_argument("--json", action="store_true", help="machine-readable output")
    listing.add_argument("--markdown", action="store_true", help="the docs' shim catalogue")
    listing.set_defaults(handler=cmd_list)
    doctor = commands.add_parser("doctor", help="diagnose what no shim can fix")
    doctor.set_defaults(handler=cmd_doctor)
    site_path = commands.add_parser(
        "sitecustomize-path", help="the folder to put on PYTHONPATH where compatfix.pth is not read"
    )
    site_path.set_defaults(handler=cmd_sitecustomize_path)
    commands.add_parser("run", help="run a program with compatfix (see `compatfix run --help`)")
    args = parser.parse_args(argv)
    return args.handler(args)


if __name__ == "__main__":
    sys.exit(main())
