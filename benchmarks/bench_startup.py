"""What compatfix costs: interpreter start-up, ``import torch``, restored aliases, memory.

Run it with the interpreter of the venv to measure (a benchmark, not a test)::

    .venvs/modern/bin/python benchmarks/bench_startup.py [--runs N] [--import-runs N]

The baseline
------------
compatfix activates through ``compatfix.pth`` in site-packages, so the only faithful
"without" is an interpreter that never sees that file. ``COMPATFIX=0`` is not one: the
``.pth`` line still runs and imports ``_compatfix_bootstrap`` (it is
shown as a separate row, the cost of the off switch). ``python -S`` plus a hand-made
``site`` call is not one either: it changes the order and the work of start-up.

So the script builds, in a temporary folder, two sibling venvs of the measured one
(``python -m venv --without-pip``, same base interpreter, same flags) whose
site-packages hold a symlink to every entry of the measured venv's site-packages:

* ``mirror+`` links everything, ``compatfix.pth`` included;
* ``mirror-`` links everything except ``compatfix.pth`` and ``compatfix.start``.

The two differ in nothing but compatfix's activation file: the same ``.pth`` files run
(``distutils-precedence.pth`` …), the same packages import from the same files, the same
byte-code caches are used. Every with/without ratio below is ``mirror+ / mirror-``.
The measured venv itself (``real``) is timed next to them as a control: ``real`` and
``mirror+`` should agree, which shows that the mirroring adds nothing.

How it measures
---------------
* Children are started with ``os.posix_spawn`` and reaped with ``os.wait4``, which gives
  each child's own wall time, CPU time (user + sys) and peak RSS (``ru_maxrss``), with no
  measuring code inside the child. CPU time is much less noisy than wall time on a busy
  machine; both are shown.
* The variants are interleaved round by round, in an order reversed every other round
  (A B C, C B A, …), so that drift (thermal, other jobs) hits all of them alike.
* Medians are reported, and the ratio of the medians; "paired" is the median of the
  per-round ratios, with its quartiles, as a noise gauge.
* Alias access (``np.float`` vs ``np.float64``) is timed with ``timeit`` inside one child
  of the measured venv, interleaved, best of several repeats. ``np.float`` is a plain
  module attribute once restored, so the ratio should be ~1. The same is done with
  ``--report`` active (COMPATFIX_REPORT), where restored names go through a module
  ``__getattr__`` that records their call sites: that one is expected to be slower.
* The environment is passed on as it is (minus COMPATFIX_* and PYTHONPATH); children
  write no byte-code under PYTHONDONTWRITEBYTECODE, so the script warns when
  compatfix's start-up modules have none (then every start compiles them).
* ``--instructions`` also counts the instructions each child executes, under valgrind's
  callgrind (``--instructions-only``: nothing else), and prints the table the docs quote:
  ``python -c pass``, ``import numpy``, ``import torch``, and ``import torch`` followed by a
  program's first tensor operations (``t().eq``, ``masked_fill``, ``sum``), each with
  compatfix on and with ``COMPATFIX=0``, their ratio and the extra instructions
  (``python -c pass`` also against the mirror without compatfix.pth). Each count is of one
  child run from an empty folder with PYTHONHASHSEED=0, one OpenBLAS/OpenMP thread and
  fresh byte-code (an empty PYTHONPYCACHEPREFIX, which one uncounted run first fills from
  the installed sources and which leaves compatfix's plugin-scan cache as later processes
  find it).
  A count is the same for the same binary, inputs and environment whatever else the
  machine is doing, so that ratio holds on a loaded machine where the time ratios do not.
  It is slow (about a minute for ``import numpy``, several for ``import torch``).
* Children run in an empty temporary folder, so the ``''`` that ``python -c`` puts on
  ``sys.path`` is not the repository's root, whose source ``compatfix/`` would shadow the
  installed package, and no write (the ``--report`` file) changes the plugin-scan cache's key.
* ``-X importtime`` of the measured venv gives compatfix's own share of start-up, and
  ``sys.modules`` after ``-c pass`` shows what start-up imported: none of wrapt,
  importlib.metadata, packaging, numpy, torch may be there.

The project's targets: start-up ratio <= 1.05; ``import numpy`` and ``import torch`` <= 1.02,
with the number of compatfix modules each import loads reported beside them.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HEAVY = ("wrapt", "importlib.metadata", "importlib_metadata", "packaging", "numpy", "torch")
COMPATFIX_VARIABLES = (
    "COMPATFIX", "COMPATFIX_DISABLE", "COMPATFIX_ENABLE", "COMPATFIX_STRICT",
    "COMPATFIX_REPORT", "COMPATFIX_DEVICE", "COMPATFIX_RUN_ID",
)
ACTIVATION_FILES = ("compatfix.pth", "compatfix.start")
IMPORTTIME_MODULES = ("__future__", "_distutils_hack", "site")

ALIAS_CODE = r"""
import json, sys, timeit
import numpy as np
n, repeats = int(sys.argv[1]), int(sys.argv[2])
pairs = [("np.float", "np.float64"), ("np.int", "np.int64"), ("np.NaN", "np.nan"),
         ("np.product", "np.prod")]
best = {}
g = {"np": np}
for _ in range(repeats):
    for alias, native in pairs:
        for stmt in (alias, native) if _ % 2 == 0 else (native, alias):
            t = timeit.timeit(stmt, globals=g, number=n)
            best[stmt] = min(best.get(stmt, t), t)
print(json.dumps({"pairs": pairs, "best": best}))
"""


# --- environment ------------------------------------------------------------------------


def clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in COMPATFIX_VARIABLES}
    env.pop("PYTHONPATH", None)
    env["PYTHONWARNINGS"] = "ignore"
    env.update(extra)
    return env


def site_packages(python: str) -> str:
    out = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True, text=True, check=True, env=clean_env(COMPATFIX="0"),
    )
    return out.stdout.strip()


def make_mirror(source_python: str, source_site: str, folder: str, with_compatfix: bool) -> str:
    """A sibling venv whose site-packages links every entry of ``source_site``."""
    subprocess.run([source_python, "-m", "venv", "--without-pip", folder],
                   check=True, env=clean_env(COMPATFIX="0"))
    python = os.path.join(folder, "bin", "python")
    target = site_packages(python)
    for name in sorted(os.listdir(source_site)):
        if not with_compatfix and name in ACTIVATION_FILES:
            continue
        os.symlink(os.path.join(source_site, name), os.path.join(target, name))
    return python


# --- measuring --------------------------------------------------------------------------


def spawn(python: str, args: list[str], env: dict[str, str]) -> tuple[float, float, int, int]:
    """Run one child; (wall s, cpu s, peak RSS KiB, exit status)."""
    actions = [
        (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
        (os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0),
        (os.POSIX_SPAWN_OPEN, 2, os.devnull, os.O_WRONLY, 0),
    ]
    start = time.perf_counter()
    pid = os.posix_spawn(python, [python, *args], env, file_actions=actions)
    _, status, usage = os.wait4(pid, 0)
    wall = time.perf_counter() - start
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss, os.waitstatus_to_exitcode(status)


def interleaved(variants: dict[str, tuple[str, dict[str, str]]], args: list[str], runs: int,
                warmup: int = 2) -> dict[str, dict[str, list[float]]]:
    names = list(variants)
    for _ in range(warmup):
        for name in names:
            python, env = variants[name]
            spawn(python, args, env)
    results = {name: {"wall": [], "cpu": [], "rss": []} for name in names}
    for round_ in range(runs):
        for name in names if round_ % 2 == 0 else names[::-1]:
            python, env = variants[name]
            wall, cpu, rss, code = spawn(python, args, env)
            if code != 0:
                raise SystemExit("%s %s exited with %d" % (name, " ".join(args), code))
            results[name]["wall"].append(wall)
            results[name]["cpu"].append(cpu)
            results[name]["rss"].append(rss)
    return results


# A count is only repeatable with one thread per library: OpenBLAS (numpy, torch) and OpenMP
# start worker threads at import, whose spin-waits count instructions as they please (two
# runs of `import numpy` differed by 2M).
SINGLE_THREADED = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


# `import torch` and a program's first tensor operations: the comparison and the masked
# fill that shims wrap, and a reduction that none does.
FIRST_OPS = ("import torch\nx = torch.zeros(3, 4)\nm = x.t().eq(0)\ny = x.masked_fill(m.t(), 1.0)\n"
             "s = y.sum()")
INSTRUCTION_ROWS = (
    ("`python -c pass`", "pass", False),
    ("`import numpy`", "import numpy", False),
    ("`import torch`", "import torch", True),
    ("`import torch` + first ops (`t().eq`, `masked_fill`, `sum`)", FIRST_OPS, True),
)


def instructions(python: str, code: str, env: dict[str, str], cwd: str, argv: tuple[str, ...] = ()) -> int:
    """Instructions one ``python -c code *argv`` child executes, counted by valgrind's callgrind.

    With fresh byte-code: the child's byte-code goes to an empty PYTHONPYCACHEPREFIX
    folder, which one uncounted run first fills from the installed sources (and which
    also leaves compatfix's plugin-scan cache as any later process finds it); the counted
    run then reads it, as every run after an install does. ``cwd`` is an empty folder old
    enough for that cache to take it as settled."""
    prefix = tempfile.mkdtemp(prefix="compatfix-bench-pyc-")
    try:
        env = dict(env, PYTHONHASHSEED="0", PYTHONPYCACHEPREFIX=prefix, **SINGLE_THREADED)
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        subprocess.run([python, "-c", code, *argv], capture_output=True, env=env, cwd=cwd)
        out = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", python, "-c", code,
                              *argv],
                             capture_output=True, text=True, env=env, cwd=cwd)
    finally:
        shutil.rmtree(prefix, ignore_errors=True)
    found = re.search(r"Collected : (\d+)", out.stderr)
    if out.returncode != 0 or found is None:
        raise SystemExit("valgrind %s -c %r failed:\n%s" % (python, code, out.stderr[-2000:]))
    return int(found.group(1))


def instruction_table(python: str, without_pth: str, tmp: str, torch: bool) -> dict[str, float]:
    """The table the docs quote: per row, instructions with compatfix on and with
    ``COMPATFIX=0`` (the .pth line still runs; ``python -c pass`` is also shown against
    a venv without compatfix.pth), their ratio and the extra instructions."""
    cwd = os.path.join(tmp, "instructions-cwd")
    os.mkdir(cwd)
    os.utime(cwd, (0, 1_000_000_000))  # an old folder: nothing about it changes the scan cache's key
    on, off = clean_env(), clean_env(COMPATFIX="0")
    rows = [(label, code, python, on, python, off) for label, code, needs_torch in INSTRUCTION_ROWS
            if torch or not needs_torch]
    rows.insert(1, ("`python -c pass`, vs a venv without compatfix.pth", "pass", python, on, without_pth, on))
    print("\n(i) instructions (callgrind), compatfix on / COMPATFIX=0, fresh byte-code, PYTHONHASHSEED=0, "
          "one thread, from an empty folder")
    print("  | what | on | off | ratio | extra |\n  |---|---|---|---|---|")
    ratios = {}
    for label, code, with_python, with_env, without_python, without_env in rows:
        with_count = instructions(with_python, code, with_env, cwd)
        without_count = instructions(without_python, code, without_env, cwd)
        ratios[label] = with_count / without_count
        print("  | %s | %.1fM | %.1fM | %.3f | %+.2fM |" % (
            label, with_count / 1e6, without_count / 1e6, ratios[label], (with_count - without_count) / 1e6),
            flush=True)
    return ratios


def quartiles(values: list[float]) -> tuple[float, float, float]:
    q = statistics.quantiles(values, n=4, method="inclusive")
    return q[0], q[1], q[2]


# --- reporting --------------------------------------------------------------------------

ROW = "  {:<26} {:>10} {:>10} {:>10} {:>9}"


def fmt_time(seconds: float) -> str:
    return "%.1f ms" % (seconds * 1e3) if seconds < 10 else "%.2f s" % seconds


def report_block(title: str, results, with_name: str, without_name: str, runs: int) -> dict:
    print("\n%s  (%d interleaved runs each, medians)" % (title, runs))
    print(ROW.format("", "wall", "cpu", "min wall", "max RSS"))
    for name, r in results.items():
        print(ROW.format(name, fmt_time(statistics.median(r["wall"])), fmt_time(statistics.median(r["cpu"])),
                         fmt_time(min(r["wall"])), "%.1f MiB" % (statistics.median(r["rss"]) / 1024)))
    w, wo = results[with_name], results[without_name]
    out = {}
    for key in ("wall", "cpu", "rss"):
        ratio = statistics.median(w[key]) / statistics.median(wo[key])
        paired = [a / b for a, b in zip(w[key], wo[key])]
        q1, q2, q3 = quartiles(paired)
        diff = statistics.median(w[key]) - statistics.median(wo[key])
        unit = ("%+.2f ms" % (diff * 1e3)) if key != "rss" else ("%+.2f MiB" % (diff / 1024))
        print("  ratio %-4s %s/%s: %.3f  (paired %.3f [%.3f..%.3f], diff %s)"
              % (key, with_name, without_name, ratio, q2, q1, q3, unit))
        out[key] = ratio
    return out


def module_sets(variants, code: str) -> dict[str, set[str]]:
    sets = {}
    for name, (python, env) in variants.items():
        out = subprocess.run([python, "-c", code + "\nimport sys; print(' '.join(sorted(sys.modules)))"],
                             capture_output=True, text=True, env=env, check=True)
        sets[name] = set(out.stdout.split())
    return sets


def importtime_shares(variants, runs: int) -> dict[str, dict[str, tuple[int, int]]]:
    """Per variant, median (self, cumulative) microseconds of the start-up imports that
    matter here, from ``-X importtime -c pass`` runs interleaved across the variants."""
    samples: dict[str, dict[str, list[tuple[int, int]]]] = {name: {} for name in variants}
    pattern = re.compile(r"import time:\s+(\d+) \|\s+(\d+) \|(\s*)(\S+)")
    names = list(variants)
    for round_ in range(runs):
        for name in names if round_ % 2 == 0 else names[::-1]:
            python, env = variants[name]
            out = subprocess.run([python, "-X", "importtime", "-c", "pass"], capture_output=True, text=True,
                                 env=env)
            for line in out.stderr.splitlines():
                m = pattern.match(line)
                if m and (m.group(4) == "_compatfix_bootstrap" or m.group(4) in IMPORTTIME_MODULES):
                    samples[name].setdefault(m.group(4), []).append((int(m.group(1)), int(m.group(2))))
    return {name: {module: (int(statistics.median(s for s, _ in v)), int(statistics.median(c for _, c in v)))
                   for module, v in per.items()}
            for name, per in samples.items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=40, help="start-up runs per variant (default 40)")
    parser.add_argument("--import-runs", type=int, default=7, help="`import torch` runs per variant (default 7)")
    parser.add_argument("--numpy-runs", type=int, default=15, help="`import numpy` runs per variant (default 15)")
    parser.add_argument("--iterations", type=int, default=5_000_000, help="timeit loops per alias (default 5e6)")
    parser.add_argument("--python", default=sys.executable, help="interpreter of the venv to measure")
    parser.add_argument("--skip-torch", action="store_true", help="skip the `import torch` block")
    parser.add_argument("--instructions", action="store_true",
                        help="also count instructions with valgrind (load-independent ratios; slow)")
    parser.add_argument("--instructions-only", action="store_true",
                        help="only the instruction table (the number the docs quote), no timings")
    args = parser.parse_args()
    if args.runs < 4 or args.import_runs < 2:
        parser.error("need --runs >= 4 and --import-runs >= 2")

    python = os.path.abspath(args.python) if os.sep in args.python else shutil.which(args.python)
    real_site = site_packages(python)
    if not os.path.exists(os.path.join(real_site, "compatfix.pth")):
        raise SystemExit("%s has no compatfix.pth: install compatfix into this venv first" % real_site)

    # Without byte-code (an install with --no-compile, uv's default, under
    # PYTHONDONTWRITEBYTECODE or a read-only site-packages) every start compiles
    # compatfix's start-up modules: several ms. Say so, since it changes the verdict.
    tag = subprocess.run([python, "-c", "import sys; print(sys.implementation.cache_tag)"],
                         capture_output=True, text=True, env=clean_env(COMPATFIX="0")).stdout.strip()
    missing = [name for name in ("_compatfix_bootstrap",)
               if not os.path.exists(os.path.join(real_site, "__pycache__", "%s.%s.pyc" % (name, tag)))]

    tmp = tempfile.mkdtemp(prefix="compatfix-bench-")
    try:
        with_py = make_mirror(python, real_site, os.path.join(tmp, "with"), True)
        without_py = make_mirror(python, real_site, os.path.join(tmp, "without"), False)
        # Children start in an empty folder: `python -c` puts the working folder first on
        # sys.path, and from the repository's root that imports the source tree's
        # compatfix/ instead of the installed one (no byte-code there under
        # PYTHONDONTWRITEBYTECODE, so no plugin-scan cache either: a scan per child).
        # Nothing is written into it, which keeps the cache's key (the path's folders and
        # their modification times) the same from child to child.
        os.mkdir(os.path.join(tmp, "cwd"))
        os.chdir(os.path.join(tmp, "cwd"))
        env = clean_env()
        variants = {
            "mirror+ (with compatfix)": (with_py, env),
            "mirror- (without)": (without_py, env),
            "real venv": (python, env),
            "real venv, COMPATFIX=0": (python, clean_env(COMPATFIX="0")),
        }
        W, WO = "mirror+ (with compatfix)", "mirror- (without)"
        two = {W: variants[W], WO: variants[WO]}

        import platform

        print("compatfix start-up benchmark: %s, Python %s, %d CPUs, %s"
              % (python, platform.python_version(), os.cpu_count() or 0, platform.platform()))
        print("baseline: sibling venvs symlinking %s, with/without compatfix.pth" % real_site)
        if missing:
            print("WARNING: no byte-code for compatfix/%s.py: every start compiles it (+ms); "
                  "PYTHONDONTWRITEBYTECODE=%s" % (", ".join(missing), os.environ.get("PYTHONDONTWRITEBYTECODE", "")))

        if args.instructions_only:
            started = time.perf_counter()
            for label, ratio in instruction_table(python, without_py, tmp, not args.skip_torch).items():
                print("  %-64s %.4f   target <= %s" % (label, ratio, "1.05" if "pass" in label else "1.02"))
            print("  (benchmark took %.0f s)" % (time.perf_counter() - started))
            return 0
        summary = {}
        started = time.perf_counter()
        summary["startup"] = report_block("(a) python -c pass", interleaved(variants, ["-c", "pass"], args.runs),
                                          W, WO, args.runs)
        summary["numpy"] = report_block("(b') python -c 'import numpy'",
                                        interleaved(two, ["-c", "import numpy"], args.numpy_runs), W, WO,
                                        args.numpy_runs)
        if not args.skip_torch:
            summary["torch"] = report_block("(b) python -c 'import torch'",
                                            interleaved(two, ["-c", "import torch"], args.import_runs, warmup=1),
                                            W, WO, args.import_runs)

        if args.instructions:
            summary["instructions"] = instruction_table(python, without_py, tmp, not args.skip_torch)

        # (c) restored aliases
        # Report mode costs microseconds per access: 1/50 of the loops keeps it quick.
        report_iterations = max(1000, args.iterations // 50)
        print("\n(c) attribute access, timeit best of 5 x %d loops (--report: %d), one child of the real venv"
              % (args.iterations, report_iterations))
        alias_rows = {}
        for label, extra, n in (("plain", {}, args.iterations),
                                ("--report", {"COMPATFIX_REPORT": os.path.join(tmp, "report.json")},
                                 report_iterations)):
            out = subprocess.run([python, "-c", ALIAS_CODE, str(n), "5"],
                                 capture_output=True, text=True, env=clean_env(**extra))
            if out.returncode != 0:
                print("  %s: failed:\n%s" % (label, out.stderr[-2000:]))
                continue
            data = json.loads(out.stdout.strip().splitlines()[-1])
            for alias, native in data["pairs"]:
                a, b = data["best"][alias], data["best"][native]
                ratio = a / b
                alias_rows["%s %s" % (label, alias)] = ratio
                print("  %-9s %-11s %7.1f ns  vs %-11s %6.1f ns   ratio %.2f"
                      % (label, alias, a / n * 1e9, native, b / n * 1e9, ratio))
        summary["alias"] = alias_rows

        # start-up imports
        print("\nmodules imported at start-up (python -c pass):")
        sets = module_sets({W: variants[W], WO: variants[WO], "real venv": variants["real venv"],
                            "real venv, COMPATFIX=0": variants["real venv, COMPATFIX=0"]}, "")
        for name in (W, "real venv", "real venv, COMPATFIX=0"):
            added = sorted(sets[name] - sets[WO])
            heavy = sorted(m for m in sets[name] if m.split(".")[0] in HEAVY or m in HEAVY)
            print("  %-24s %2d modules, added vs mirror-: %s; heavy: %s"
                  % (name, len(sets[name]), " ".join(added) or "-", " ".join(heavy) or "none"))
        summary["heavy_at_startup"] = sorted(m for m in sets["real venv"] if m.split(".")[0] in HEAVY)
        loaded_counts = {}
        for target in ("numpy", "torch") if not args.skip_torch else ("numpy",):
            # Twice, counting the second: the real venv and mirror+ share compatfix's folder,
            # so a run of the other one leaves the plugin scan's cache for another path,
            # and the first run here would count the registry that a cache miss imports.
            module_sets(two, "import " + target)
            after = module_sets(two, "import " + target)
            ours = sorted(m for m in after[W] if m.startswith(("compatfix", "_compatfix")))
            loaded_counts[target] = len(ours)
            print("  after `import %s`: %d compatfix modules (%s); %d modules added in all"
                  % (target, len(ours), " ".join(ours), len(after[W] - after[WO])))
        summary["compatfix_modules_loaded"] = loaded_counts

        runs_it = max(5, args.runs // 2)
        shares = importtime_shares({"mirror+": variants[W], "mirror-": variants[WO],
                                    "real": variants["real venv"],
                                    "real, COMPATFIX=0": variants["real venv, COMPATFIX=0"]}, runs_it)
        print("\n-X importtime, median self|cumulative us over %d interleaved runs (importtime inflates them):"
              % runs_it)
        print("  %-22s" % "" + "".join("%19s" % name for name in shares))
        for module in ("_compatfix_bootstrap",) + IMPORTTIME_MODULES[1:]:
            cells = ["%8s|%-8s" % shares[name][module] if module in shares[name] else "%17s" % "-"
                     for name in shares]
            print("  %-22s" % module + "".join("%19s" % c for c in cells))
        s = summary["startup"]
        print("\nsummary (with/without compatfix, ratio of medians):")
        above = [k for k in ("wall", "cpu") if s[k] > 1.05]
        verdict = "OK" if not above else "ABOVE TARGET" if len(above) == 2 else "borderline (%s above)" % above[0]
        print("  start-up      wall %.3f  cpu %.3f  rss %.3f   target <= 1.05: %s"
              % (s["wall"], s["cpu"], s["rss"], verdict))
        counts = summary["compatfix_modules_loaded"]
        print("  import numpy  wall %.3f  cpu %.3f  rss %.3f   target <= 1.02; %d compatfix modules"
              % (tuple(summary["numpy"][k] for k in ("wall", "cpu", "rss")) + (counts["numpy"],)))
        if "torch" in summary:
            print("  import torch  wall %.3f  cpu %.3f  rss %.3f   target <= 1.02; %d compatfix modules"
                  % (tuple(summary["torch"][k] for k in ("wall", "cpu", "rss")) + (counts["torch"],)))
        for label, ratio in summary.get("instructions", {}).items():
            print("  instructions  %-52s %.4f   target <= %s"
                  % (label, ratio, "1.05" if "pass" in label else "1.02"))
        if alias_rows:
            print("  alias access  " + "  ".join("%s %.2f" % kv for kv in alias_rows.items() if kv[0].startswith("plain")))
        print("  heavy modules at start-up: %s" % (" ".join(summary["heavy_at_startup"]) or "none"))
        print("  (benchmark took %.0f s)" % (time.perf_counter() - started))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
