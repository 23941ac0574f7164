"""The ``compatfix`` command: ``status``, ``list``, ``doctor``, ``run``, ``scan`` and
``trust``.

``compatfix list`` shows every shim and whether it applies to this environment (and if
not, why not), without importing any target library.

Exit codes: 0 success (``doctor``: nothing that needs action; ``status``: active), 1
``doctor`` found an error or a warning (``status``: not active), 2 a usage error (a bad
option or option value). ``run`` exits with the program's status.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Iterable

from compatfix import _decision, _project_config
from compatfix._settings import DEVICES, Settings
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


def shim_rows(shims: list[Shim], settings: Settings, off_because: str | None = None) -> list[dict]:
    """One row per shim. ``off_because``: why compatfix is not active in this
    interpreter, if it is not; then no shim applies here (``why`` says what a run under
    ``python -m compatfix`` would do)."""
    rows = []
    for shim in shims:
        applies, why = shim_status(shim, settings, shims)
        if off_because is not None:
            why = "compatfix is off here (%s); under python -m compatfix it %s: %s" % (
                off_because, "would apply" if applies else "would not apply", why)
            applies = False
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
                "replacement": shim.replacement,
                "renames": dict(shim.renames),
                "rewrites": dict(shim.rewrites),
                "source": source_of(shim),
            }
        )
    return rows


def format_rows(rows: list[dict], active: bool = True) -> str:
    """The rows for a terminal; where compatfix is not active, each is marked "off"."""
    lines = []
    for row in rows:
        where = ", ".join(row["targets"])
        if row["kind"] == BEFORE_CONSUMER:
            where += " (before %s)" % ", ".join(row["consumers"])
        if row["restores"]:
            where += " (at the first use of a name it restores)"
        mark = "applies" if row["applies"] else "-" if active else "off"
        lines.append("%-26s %-8s %s" % (row["name"], mark, row["summary"]))
        lines.append("%-26s %-8s %s %s; %s%s" % (
            "", "", row["kind"], where, row["why"],
            "" if row["default"] else "; off by default",
        ))
        lines.append("%-26s %-8s defined at %s" % ("", "", row["source"]))
    return "\n".join(lines)


def _names_by_text(rewrites: dict[str, str]) -> list[tuple[str, list[str]]]:
    """Rewrites that say the same thing, as one line: a shim restoring hundreds of names
    of one kind (transformers' archive maps) gives one advice for all of them."""
    grouped: dict[str, list[str]] = {}
    for name, text in sorted(rewrites.items()):
        grouped.setdefault(text, []).append(name)
    return list(grouped.items())


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
        ]
        if shim.replacement:
            out.append("- To port the code for good: %s" % shim.replacement)
        out += ["- Rename `%s` to `%s`" % item for item in sorted(shim.renames.items())]
        out += ["- Rewrite %s: %s (not mechanical)" % (", ".join("`%s`" % name for name in names), text)
                for text, names in _names_by_text(shim.rewrites)]
        out += [
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


def project_settings() -> Settings:
    """The settings a run from this folder gets without options: the environment's and
    the nearest ``[tool.compatfix]``'s (a table with a bad value is ignored, and said so
    on stderr)."""
    from compatfix import _runner

    config = _project_config.load(os.getcwd())
    problems = _runner.value_problems({}, config)
    for problem in problems:
        print("compatfix: %s" % problem, file=sys.stderr)
    if problems:
        print("compatfix: %s [tool.compatfix] is ignored here" % config.path, file=sys.stderr)
        config = _project_config.NONE
    return Settings.from_environ({**os.environ, **_runner.compose({}, config)})


def cmd_status(args: argparse.Namespace) -> int:
    from compatfix.doctor.activation import activation_state

    state = activation_state()
    if args.json:
        json.dump(state.as_dict(), sys.stdout, indent=2)
        print()
    else:
        print(state.line())
    return 0 if state.active else 1


def cmd_list(args: argparse.Namespace) -> int:
    shims, problems = all_shims(DEVICES)
    for problem in problems:
        print("compatfix: %s" % problem, file=sys.stderr)
    if args.markdown:
        print(catalogue_markdown([s for s in shims if s.origin == "compatfix"]), end="")
        return 0
    from compatfix.doctor.activation import activation_state

    state = activation_state()
    settings = project_settings()
    for problem in settings.problems + settings.unknown_names(s.name for s in shims):
        print("compatfix: %s" % problem, file=sys.stderr)
    rows = shim_rows(shims, settings, None if state.active else state.reason)
    if args.json:
        json.dump(rows, sys.stdout, indent=2)
        print()
    else:
        print(state.line())
        print()
        print(format_rows(rows, state.active))
    return 0


def cmd_doctor(args: argparse.Namespace) -> int:
    from compatfix import doctor
    from compatfix.doctor.activation import activation_state

    state = activation_state()
    findings = doctor.run_checks()
    needs_action = any(finding.severity in ("error", "warning") for finding in findings)
    if args.json:
        json.dump({
            "activation": state.as_dict(),
            "findings": [finding._asdict() for finding in findings],
            "needs_action": needs_action,
        }, sys.stdout, indent=2)
        print()
    else:
        print(state.line())
        print()
        print(doctor.format_findings(findings))
    return 1 if needs_action else 0


def cmd_sitecustomize_path(args: argparse.Namespace) -> int:
    print(os.path.join(os.path.dirname(os.path.abspath(__file__)), "sitecustomize"))
    return 0


def _delegate(module_name: str, what: str, argv: list[str]) -> int:
    """Hand ``argv`` to ``module_name.main``, a subcommand that lives in its own module."""
    import importlib

    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name is None or not module_name.startswith(exc.name):
            raise  # the module is there, and something it imports is not
        print("compatfix: `compatfix %s` is not part of this installation (no module %s)" % (what, module_name),
              file=sys.stderr)
        return 2
    return int(module.main(argv))


# subcommand -> the module whose main(argv) -> int implements it
DELEGATED = {
    "run": "compatfix._runner",
    "scan": "compatfix.scan",
    "trust": "compatfix.checkpoint.trust_cli",
}


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] and argv[0] in DELEGATED:
        return _delegate(DELEGATED[argv[0]], argv[0], argv[1:])
    from compatfix import __version__

    parser = argparse.ArgumentParser(
        prog="compatfix",
        description="Run 2020-22 deep-learning research code unmodified on today's stack.",
        epilog="To run a program with compatfix: compatfix run [options] script.py args... "
        "(or python -m compatfix [options] script.py args...; see compatfix run --help). "
        "Exit codes: 0 success (doctor: nothing needs action; status: active), 1 doctor found "
        "an error or warning (status: not active), 2 usage error.",
    )
    parser.add_argument("--version", action="version", version="compatfix %s" % __version__)
    commands = parser.add_subparsers(dest="command", required=True)
    status = commands.add_parser("status", help="whether compatfix is active in this interpreter, and why not")
    status.add_argument("--json", action="store_true", help="machine-readable output")
    status.set_defaults(handler=cmd_status)
    listing = commands.add_parser("list", help="every shim, and whether it applies here")
    listing.add_argument("--json", action="store_true", help="machine-readable output")
    listing.add_argument("--markdown", action="store_true", help="the docs' shim catalogue")
    listing.set_defaults(handler=cmd_list)
    doctor = commands.add_parser("doctor", help="diagnose what no shim can fix (exit 1 if something needs action)")
    doctor.add_argument("--json", action="store_true", help="machine-readable output")
    doctor.set_defaults(handler=cmd_doctor)
    site_path = commands.add_parser(
        "sitecustomize-path", help="the folder to put on PYTHONPATH where compatfix.pth is not read"
    )
    site_path.set_defaults(handler=cmd_sitecustomize_path)
    commands.add_parser("run", help="run a program with compatfix (see `compatfix run --help`)")
    commands.add_parser("scan", help="find the legacy APIs a code base uses (see `compatfix scan --help`)")
    commands.add_parser("trust", help="list or forget trusted checkpoints (see `compatfix trust --help`)")
    args = parser.parse_args(argv)
    return args.handler(args)


if __name__ == "__main__":
    sys.exit(main())
