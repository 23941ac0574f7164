"""``python -m compatfix [options] script.py args…`` and ``… -m module args…``.

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

USAGE = """\
usage: python -m compatfix [options] script.py [args ...]
       python -m compatfix [options] -m module [args ...]

Runs a Python program unmodified with compatfix's shims active.

options:
  --disable NAME[,NAME]  turn shims off (globs allowed: 'numpy.*')   [COMPATFIX_DISABLE]
  --enable NAME[,NAME]   turn default-off shims on                    [COMPATFIX_ENABLE]
  --strict               a shim that fails to apply is an error       [COMPATFIX_STRICT=1]
  --report PATH          write a JSON report of what compatfix did     [COMPATFIX_REPORT]
  --device cpu           run CUDA code on the CPU                     [COMPATFIX_DEVICE]
  -h, --help             show this help and exit
  --version              show compatfix's version and exit

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
    """Split ``argv`` into environment settings, the run mode and the program's argv.

    The mode is "script" or "module"; None means help or version was asked for.
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
            if variable in ("COMPATFIX_DISABLE", "COMPATFIX_ENABLE"):
                # Lists add up: the environment's, then each --disable/--enable given.
                earlier = earlier if earlier is not None else os.environ.get(variable)
                if earlier:
                    env[variable] = earlier + "," + env[variable]
            index += 1
            continue
        if arg.startswith("-"):
            raise UsageError("unknown option %r" % arg)
        break
    if index >= len(argv):
        raise UsageError("no script or -m module to run")
    return env, "script", argv[index:]


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


def _trimmed(tb):
    """The traceback without compatfix's runner frames, as `python script.py` shows it.

    runpy's frames stay: `python -m module` (and `python folder`) show them too."""
    while tb is not None and tb.tb_frame.f_globals.get("__name__") in (__name__, "compatfix.__main__"):
        tb = tb.tb_next
    return tb


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    try:
        env, mode, program = parse(argv)
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

    _propagate(env)
    import _compatfix_bootstrap as _bootstrap

    finder = _bootstrap.activate("cli")
    # Load the engine now rather than at the first target import: plugin shims then
    # know their targets before the program imports anything.
    finder.load_handler()
    try:
        if mode == "module":
            run_module(program[0], program[1:])
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
