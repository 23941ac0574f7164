"""``python -m compatfix [options] script.py args…``, ``… -m module args…``, ``… -c code
args…`` and ``… - args…`` (the program from stdin); ``… -- python [python options] …``
runs that interpreter with compatfix.

Runs the program exactly as ``python script.py`` / ``python -m module`` would (``sys.argv``,
``sys.path[0]``, a real ``__main__`` module, ``__file__``, exit codes and tracebacks
without compatfix's own frames), with compatfix active. Options are passed on through
the environment, so every process the program starts (torchrun and
``torch.distributed.launch`` workers, multiprocessing spawn children, DataLoader workers)
runs with the same options.
"""

from __future__ import annotations

import os
import sys
import types

from compatfix import _project_config

USAGE = """\
usage: python -m compatfix [options] script.py [args ...]
       python -m compatfix [options] -m module [args ...]
       python -m compatfix [options] -c code [args ...]
       python -m compatfix [options] - [args ...]        (the program from stdin)
       python -m compatfix [options] -- python [python options] script.py [args ...]

Runs a Python program unmodified with compatfix's shims active. `compatfix run` takes
the same arguments.

options:
  --disable NAME[,NAME]  turn shims off (globs allowed: 'numpy.*')   [COMPATFIX_DISABLE]
  --enable NAME[,NAME]   turn default-off shims on                    [COMPATFIX_ENABLE]
  --strict               a shim that fails to apply is an error       [COMPATFIX_STRICT=1]
  --report PATH          write a JSON report of what compatfix did     [COMPATFIX_REPORT]
  --device cpu           run CUDA code on the CPU                     [COMPATFIX_DEVICE]
  -h, --help             show this help and exit
  --version              show compatfix's version and exit

Precedence: an option, then its environment variable, then [tool.compatfix] in the
nearest pyproject.toml (from the script's folder, else the current one); the
--disable/--enable lists of all three add up. A bad option value is an error (exit 2).

`compatfix list` shows every shim and whether it applies here; `compatfix doctor`
diagnoses problems that no shim can fix.
"""

# option -> (environment variable, takes a value)
OPTIONS = {
    "--disable": ("COMPATFIX_DISABLE", True),
    "--enable": ("COMPATFIX_ENABLE", True),
    "--strict": ("COMPATFIX_STRICT", False),
    "--report": ("COMPATFIX_REPORT", True),
    "--device": ("COMPATFIX_DEVICE", True),
}


class UsageError(Exception):
    pass


def parse(argv: list[str]) -> tuple[dict[str, str], str | None, list[str]]:
    """Split ``argv`` into the options' environment settings, the run mode and the
    program's argv.

    The mode is "script", "module", "command" (``-c``, the code first in the program's
    argv) or "stdin" (``-``); None means help or version was asked for. The settings are
    the options' own: ``--disable``/``--enable`` given twice add up, and ``compose``
    adds the environment's and the project's to them.
    """
    env: dict[str, str] = {}
    index = 0
    while index < len(argv):
        arg = argv[index]
        if arg in ("-h", "--help", "--version"):
            return env, None, [arg]
        if arg == "-m":
            if index + 1 >= len(argv):
                raise UsageError("-m needs a module name")
            return env, "module", argv[index + 1 :]
        if arg == "-c" or arg.startswith("-c") and not arg.startswith("--"):
            # As python has it: the code is the next argument (or glued on: -cCODE), and
            # every argument after it is the program's.
            if arg != "-c":
                return env, "command", [arg[2:]] + argv[index + 1 :]
            if index + 1 >= len(argv):
                raise UsageError("-c needs the code to run")
            return env, "command", argv[index + 1 :]
        if arg == "-":
            return env, "stdin", argv[index:]
        if arg == "--":
            index += 1
            break
        name, has_value, value = arg.partition("=")
        if name in OPTIONS:
            variable, takes_value = OPTIONS[name]
            earlier = env.get(variable)
            if not takes_value:
                if has_value:
                    raise UsageError("%s takes no value" % name)
                env[variable] = "1"
            elif has_value:
                env[variable] = value
            elif index + 1 < len(argv):
                index += 1
                env[variable] = argv[index]
            else:
                raise UsageError("%s needs a value" % name)
            if variable in LIST_VARIABLES and earlier:
                env[variable] = earlier + "," + env[variable]
            index += 1
            continue
        if arg.startswith("-"):
            raise UsageError("unknown option %r" % arg)
        break
    if index >= len(argv):
        raise UsageError("no script or -m module to run")
    if argv[index] == "-":
        return env, "stdin", argv[index:]
    return env, "script", argv[index:]


LIST_VARIABLES = ("COMPATFIX_DISABLE", "COMPATFIX_ENABLE")
_OPTION_OF = {variable: option for option, (variable, _) in OPTIONS.items()}


def compose(
    options: dict[str, str], config: "_project_config.ProjectConfig", environ: "dict[str, str] | None" = None
) -> dict[str, str]:
    """The settings a run gets, as environment variables: each option, else its
    environment variable, else the project's value.

    The disable/enable lists of the three add up, except that a name one of them enables
    (disables) is taken off the disable (enable) lists below it: ``--enable X`` wins over
    ``disable = ["X"]`` in the project, where the engine's rule alone (disabling wins)
    would let the project override the command line."""
    environ = dict(os.environ) if environ is None else environ
    layers = [config.env, {v: environ[v] for v in LIST_VARIABLES if environ.get(v)}, options]  # lowest first
    lists: dict[str, list[list[str]]] = {variable: [] for variable in LIST_VARIABLES}
    for layer in layers:
        for variable in LIST_VARIABLES:
            names = list(_split(layer.get(variable, "")))
            other = LIST_VARIABLES[1 - LIST_VARIABLES.index(variable)]
            for lower in lists[other]:
                lower[:] = [name for name in lower if name not in names]
            lists[variable].append(names)
    env = {}
    for variable in LIST_VARIABLES:
        joined = ",".join(name for names in lists[variable] for name in names)
        if joined != environ.get(variable, ""):
            env[variable] = joined
    for variable in (set(options) | set(config.env)) - set(LIST_VARIABLES):
        if variable in options:
            env[variable] = options[variable]
        elif not environ.get(variable, "").strip():
            env[variable] = config.env[variable]
    return env


def _split(value: str) -> "list[str]":
    return [part.strip() for part in value.split(",") if part.strip()]


def value_problems(options: dict[str, str], config: "_project_config.ProjectConfig") -> list[str]:
    """One line per bad value that the user set as an option or in ``[tool.compatfix]``,
    naming that option or key (a bad environment variable is the engine's warning)."""
    given = [(_OPTION_OF[variable], variable, value) for variable, value in options.items()]
    key_of = {variable: key for key, variable in _project_config.KEYS.items()}
    given += [("%s [tool.compatfix] %s" % (config.path, key_of[variable]), variable, value)
              for variable, value in config.env.items()]
    problems = list(config.problems)
    for source, variable, value in given:
        problem = _bad_value(variable, value)
        if problem:
            problems.append("%s: %s" % (source, problem))
    return problems


def _bad_value(variable: str, value: str) -> str | None:
    from compatfix import _settings

    if variable in LIST_VARIABLES:
        unknown = [name for name in _settings.split_names(value) if not _names_a_shim(name)]
        if unknown:
            return "%s %s no shim (see `compatfix list`)" % (
                ", ".join(repr(name) for name in unknown), "matches" if len(unknown) == 1 else "match")
    elif variable == _settings.ENV_DEVICE:
        if value.strip().lower() not in _settings.DEVICES:
            return "%r is not a known device (known: %s)" % (value, ", ".join(_settings.DEVICES))
    elif variable == _settings.ENV_REPORT:
        if not value.strip():
            return "needs a file name"
        folder = os.path.dirname(os.path.abspath(value))
        if not os.path.isdir(folder):
            return "%r cannot be written: its folder %s does not exist" % (value, folder)
    return None


def _names_a_shim(pattern: str) -> bool:
    """Whether a disable/enable pattern matches a built-in shim, or else a plugin's (the
    plugin scan runs only for a pattern that no built-in shim matches)."""
    from compatfix import _plugins, _settings, _shim_index

    if any(_settings.matches(name, pattern) for name in _shim_index.NAMES):
        return True
    global _plugin_names
    if _plugin_names is None:
        from compatfix.registry import plugin_shims

        _plugin_names = {shim.name for shim in plugin_shims(_plugins.plugin_entry_points())[0]}
    return any(_settings.matches(name, pattern) for name in _plugin_names)


_plugin_names: "set[str] | None" = None


def _propagate(env: dict[str, str]) -> None:
    """Make the options and the activation reach every child process."""
    import _compatfix_bootstrap as _bootstrap

    os.environ.update(env)
    os.environ["COMPATFIX"] = "1"  # asked for explicitly: children activate too
    if env.get("COMPATFIX_REPORT"):
        # Children may change directory; and this process starts a new run's report.
        os.environ["COMPATFIX_REPORT"] = os.path.abspath(env["COMPATFIX_REPORT"])
        _bootstrap.start_run()
    if _bootstrap.activated_by in ("pth", "sitecustomize"):
        return
    package_root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    if os.path.exists(os.path.join(package_root, "compatfix.pth")):
        return  # installed (only switched off here): COMPATFIX=1 lets the .pth act
    # Not installed with its .pth (a source checkout, a PYTHONPATH deployment): put the
    # sitecustomize folder and compatfix itself on PYTHONPATH for the children.
    site_folder = os.path.join(package_root, "compatfix", "sitecustomize")
    paths = [site_folder, package_root]
    current = os.environ.get("PYTHONPATH", "")
    parts = [part for part in current.split(os.pathsep) if part and part not in paths]
    os.environ["PYTHONPATH"] = os.pathsep.join(paths + parts)


def _fresh_main() -> types.ModuleType:
    """A new ``__main__`` for the program; compatfix's own runner keeps its real name
    so that importing it again does not run it twice."""
    runner_main = sys.modules.get("__main__")
    if runner_main is not None and getattr(runner_main, "__spec__", None) is not None:
        sys.modules[runner_main.__spec__.name] = runner_main
    import builtins

    main = types.ModuleType("__main__")
    # What the interpreter's own __main__ starts with (in this module, __builtins__ is
    # the builtins module's dict, not the module a program's __main__ sees).
    main.__dict__.update(__annotations__={}, __builtins__=builtins)
    sys.modules["__main__"] = main
    return main


def _safe_path() -> bool:
    return bool(getattr(sys.flags, "safe_path", False))


def run_script(path: str, args: list[str]) -> None:
    import runpy

    sys.argv[:] = [path] + args
    if os.path.isdir(path) or not path.endswith((".py", ".pyw")) and _is_zip(path):
        # A folder or zip with __main__.py: what CPython does for `python folder`
        # (it puts the absolute path first, -P or not).
        folder = _cli_abspath(path)
        sys.path.insert(0, folder) if _safe_path() else _set_path0(folder)
        _fresh_main()
        runpy._run_module_as_main("__main__", alter_argv=False)
        return
    if not _safe_path():
        _set_path0(os.path.dirname(os.path.realpath(path)))
    from importlib.machinery import SourceFileLoader

    try:
        with open(path, "rb") as handle:
            source = handle.read()
    except OSError as exc:
        # What CPython says (and its exit status) for a script it cannot open.
        sys.stderr.write("%s: can't open file %r: [Errno %s] %s\n" % (
            sys.executable, _cli_abspath(path), exc.errno, exc.strerror))
        raise SystemExit(2)
    filename = _cli_abspath(path)
    code = compile(source, filename, "exec", dont_inherit=True)
    main = _fresh_main()
    main.__dict__.update(
        __file__=filename,
        __cached__=None,
        __loader__=SourceFileLoader("__main__", filename),
        __spec__=None,
        __package__=None,
    )
    exec(code, main.__dict__)


def _cli_abspath(path: str) -> str:
    """The script's path as CPython makes it absolute (``__file__``, tracebacks): the
    cwd joined to the path as given, not normalised (``./train.py`` keeps its ``./``)."""
    return path if os.path.isabs(path) else os.path.join(os.getcwd(), path)


def _is_zip(path: str) -> bool:
    import zipfile

    return os.path.isfile(path) and zipfile.is_zipfile(path)


def _set_path0(folder: str) -> None:
    # `python -m compatfix` put the cwd first; the program expects its own folder there.
    if sys.path:
        sys.path[0] = folder
    else:
        sys.path.insert(0, folder)


def run_module(name: str, args: list[str]) -> None:
    import runpy

    sys.argv[:] = [name] + args  # runpy puts the module's file in argv[0], as -m does
    if not _safe_path():
        _set_path0(os.getcwd())
    _fresh_main()
    runpy._run_module_as_main(name, alter_argv=True)


def run_code(source: "str | bytes", filename: str, args: list[str]) -> None:
    """Run ``python -c code`` (filename ``<string>``) or ``python -`` (``<stdin>``) as
    CPython does: ``sys.argv`` starts with ``-c`` / ``-``, ``sys.path[0]`` is ``''``
    (unless -P), and ``__main__`` has the built-in importer as its loader (and, for
    stdin, ``__file__`` ``<stdin>``)."""
    from importlib.machinery import BuiltinImporter

    sys.argv[:] = ["-c" if filename == "<string>" else "-"] + args
    if not _safe_path():
        _set_path0("")
    code = compile(source, filename, "exec", dont_inherit=True)
    main = _fresh_main()
    main.__dict__.update(__loader__=BuiltinImporter)
    if filename == "<stdin>":
        main.__dict__.update(__file__=filename, __cached__=None)
    exec(code, main.__dict__)


# python's own options that take a value as the next argument (python -W error ...)
_PYTHON_OPTIONS_WITH_VALUE = ("-W", "-X", "--check-hash-based-pycs")


def names_an_interpreter(word: str) -> "str | None":
    """The path of the Python interpreter that ``word`` names (``python``, ``python3.11``,
    ``/usr/bin/python3``), or None: ``compatfix run python train.py`` means the
    interpreter, not a script file called ``python``."""
    import re
    import shutil

    if not re.fullmatch(r"python(3(\.\d+)?)?[dtw]?(\.exe)?", os.path.basename(word), re.IGNORECASE):
        return None
    if os.sep in word or (os.altsep and os.altsep in word):
        return word if os.path.isfile(word) and os.access(word, os.X_OK) else None
    if os.path.exists(word):
        return None  # a file of that name here: run it, as python would
    return shutil.which(word)


def run_interpreter(interpreter: str, options: list[str], python_args: list[str]) -> int:
    """``compatfix run [options] -- python [python options] program...``: run that
    interpreter as ``python [python options] -m compatfix [options] program...``."""
    flags: list[str] = []
    index = 0
    while index < len(python_args):
        arg = python_args[index]
        if not arg.startswith("-") or arg == "-" or arg[:2] in ("-c", "-m"):
            break
        index += 1
        if arg == "--":
            break
        flags.append(arg)
        if arg in _PYTHON_OPTIONS_WITH_VALUE and index < len(python_args):
            flags.append(python_args[index])
            index += 1
    command = [interpreter, *flags, "-m", "compatfix", *options, *python_args[index:]]
    if os.path.dirname(os.path.abspath(interpreter)) != os.path.dirname(os.path.abspath(sys.executable)):
        import subprocess

        probe = subprocess.run([interpreter, "-c", "import compatfix"], capture_output=True)
        if probe.returncode != 0:
            sys.stderr.write(
                "compatfix: %s has no compatfix installed; install compatfix into it, "
                "or run the program with this one: %s -m compatfix ...\n" % (interpreter, sys.executable))
            return 2
    sys.stdout.flush()
    sys.stderr.flush()
    if os.name == "nt":  # no exec there: wait for it and pass its status on
        import subprocess

        return subprocess.call(command)
    os.execv(interpreter, command)
    return 0  # not reached


def _trimmed(tb):
    """The traceback without compatfix's runner frames, as `python script.py` shows it.

    runpy's frames stay: `python -m module` (and `python folder`) show them too."""
    while tb is not None and tb.tb_frame.f_globals.get("__name__") in (__name__, "compatfix.__main__"):
        tb = tb.tb_next
    return tb


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    try:
        options, mode, program = parse(argv)
    except UsageError as exc:
        sys.stderr.write("compatfix: %s\n\n%s" % (exc, USAGE))
        return 2
    if mode is None:
        if program == ["--version"]:
            from compatfix import __version__

            print("compatfix", __version__)
        else:
            print(USAGE, end="")
        return 0
    if mode == "script":
        interpreter = names_an_interpreter(program[0])
        if interpreter is not None:
            given = argv[: len(argv) - len(program)]
            return run_interpreter(interpreter, given[:-1] if given[-1:] == ["--"] else given, program[1:])
        hint = _not_a_script_hint(program[0])
        if hint:
            sys.stderr.write("compatfix: %s\n" % hint)
            return 2
    start = os.path.dirname(os.path.abspath(program[0])) if mode == "script" else os.getcwd()
    config = _project_config.load(start)
    problems = value_problems(options, config)
    if problems:
        for problem in problems:
            sys.stderr.write("compatfix: %s\n" % problem)
        return 2

    _propagate(compose(options, config))
    import _compatfix_bootstrap as _bootstrap

    finder = _bootstrap.activate("cli")
    # Load the engine now rather than at the first target import: plugin shims then
    # know their targets before the program imports anything.
    finder.load_handler()
    try:
        if mode == "module":
            run_module(program[0], program[1:])
        elif mode == "command":
            run_code(program[0], "<string>", program[1:])
        elif mode == "stdin":
            run_code(sys.stdin.buffer.read(), "<stdin>", program[1:])
        else:
            run_script(program[0], program[1:])
    except SystemExit:
        raise
    except BaseException as exc:
        # The default hook prints exc.__traceback__, whatever it is passed.
        exc.__traceback__ = _trimmed(exc.__traceback__)
        sys.excepthook(type(exc), exc, exc.__traceback__)
        if isinstance(exc, KeyboardInterrupt):
            _exit_as_interrupted()
        return 1
    return 0


def _not_a_script_hint(word: str) -> "str | None":
    """A one-line hint when the program named is a command on PATH, not a script."""
    import shutil

    if os.path.exists(word) or word.endswith((".py", ".pyw")) or shutil.which(word) is None:
        return None
    return ("%r is a command, not a Python script: compatfix runs a script, a module or an interpreter "
            "(compatfix run [options] script.py ..., -m module ..., or -- python ...)" % word)


def _exit_as_interrupted() -> None:
    """End the process the way CPython does after an uncaught KeyboardInterrupt: clean
    up, then die by SIGINT, so that the parent (a shell, a launcher) sees the signal."""
    import atexit
    import signal

    atexit._run_exitfuncs()
    sys.stdout.flush()
    sys.stderr.flush()
    if os.name == "nt":
        os._exit(0xC000013A)  # STATUS_CONTROL_C_EXIT, what Windows' python returns
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    os.kill(os.getpid(), signal.SIGINT)
