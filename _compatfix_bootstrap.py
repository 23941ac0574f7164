"""Start-up activation: the only compatfix code that runs in every Python process.

It must stay stdlib-only and nearly free (principle 1): it reads a few environment
variables and puts one small meta-path finder on ``sys.meta_path``. The finder looks at
an import only when the imported name's top-level package is one compatfix has shims
for; the first such import loads the shim engine (``compatfix._engine``), which from
then on answers those imports (its ``ImportHandler``) and loads the shims each needs.

Entry points into this module: ``bootstrap()`` (named by ``compatfix.pth`` and
``compatfix.start``), the sitecustomize folder, and ``python -m compatfix``.

It is a top-level module, not part of the ``compatfix`` package, so that start-up loads
one small file instead of two (the package's ``__init__`` loads only when needed). Every
line here is paid for by every Python process: what only a target import needs lives in
the engine. ``os`` is imported inside the functions that use it, never kept as a global:
the finder stays on ``sys.meta_path`` to the end, and through it a global ``os`` makes
interpreter shutdown measurably slower in a venv where nothing else holds it (about 1% of
``python -c pass``, benchmarks/bench_startup.py).
"""

import _thread  # not `threading`: that module is not loaded at start-up and costs time
import sys

# Top-level packages that some built-in shim targets or waits for. A test checks that
# this equals what the registry declares, so the two cannot drift apart. Standard-library
# targets (argparse, collections, ...) are left out on purpose: almost every process
# imports them, so their shims wait until a third-party target has loaded the engine.
TRIGGER_PACKAGES = frozenset({"albumentations", "apex", "matplotlib", "mmcv", "mmdet", "mmseg", "numpy", "omegaconf", "pandas", "PIL", "pkg_resources", "pytorch_lightning", "rich", "scipy", "skimage", "sklearn", "timm", "torch", "torchvision", "transformers", "yaml"})
# Targets of CPU mode's shims only (the GPU queries outside torch): triggers when
# COMPATFIX_DEVICE=cpu, since a script may ask GPUtil for a free GPU before it imports torch.
CPU_MODE_TRIGGER_PACKAGES = frozenset({"GPUtil", "gpustat", "nvidia_smi", "pynvml"})

# How this process was activated: None (not at all), "pth", "sitecustomize" or "cli".
activated_by = None  # type: str | None


_OFF_VALUES = ("0", "false", "no", "off")
_ON_VALUES = ("", "1", "true", "yes", "on")


_told_unknown_value = False


def _switched_off() -> bool:
    # -I promises an interpreter unaffected by the user's environment; honour it.
    if sys.flags.isolated:
        return True
    import os

    value = os.environ.get("COMPATFIX", "1").strip().lower()
    if value in _OFF_VALUES:
        return True
    global _told_unknown_value
    if value not in _ON_VALUES and not _told_unknown_value:
        # A typo must not pass for a decision: say what was understood (once: the .pth and
        # the sitecustomize folder may both ask).
        _told_unknown_value = True
        sys.stderr.write(
            "compatfix: COMPATFIX=%r is not a known value (on: 1, true, yes, on; off: 0, false, no, "
            "off); compatfix stays on.\n" % os.environ["COMPATFIX"]
        )
    return False


class CompatfixFinder:
    """Meta-path finder that hands imports of target packages to the shim engine.

    For any other name it returns None after one set lookup, so ordinary imports pay
    nothing measurable. It imports nothing itself until a target is imported; then the
    engine's import handler (``compatfix._engine.ImportHandler``) answers.
    """

    is_compatfix_finder = True  # how installed_finder() recognises it (no isinstance:
    # a second copy of this module, e.g. from another sys.path entry, must match too)

    def __init__(self) -> None:
        import os

        self.packages = set(TRIGGER_PACKAGES)
        if "TORCHELASTIC_RUN_ID" in os.environ:
            # A worker started by torchrun / torch.distributed.launch may parse its
            # --local_rank before it imports torch: there argparse is a trigger too.
            self.packages.add("argparse")
        if os.environ.get("COMPATFIX_DEVICE", "").strip().lower() == "cpu":
            self.packages |= CPU_MODE_TRIGGER_PACKAGES
        self.handler = None  # the engine's ImportHandler, once a target import loaded it

    def find_spec(self, fullname, path=None, target=None):
        handler = self.handler
        if handler is not None:  # the engine has loaded: it knows each name it watches
            if fullname in handler.watched:
                return handler.find_spec(fullname, path, target)
            return None
        if fullname.partition(".")[0] not in self.packages:
            return None
        was_imported = fullname in sys.modules
        handler = self.load_handler()
        if handler is None:
            return None
        if not was_imported and fullname in sys.modules:
            # Loading the engine imported this very module (a plugin's top-level import):
            # the import system gets that module, not a second copy.
            return handler.spec_of_existing(fullname)
        return handler.find_spec(fullname, path, target)

    def load_handler(self):
        """The engine's import handler, loading the engine on first use (it imports the
        shims' index and applies the shims of targets imported before it). None while
        the engine is loading on this thread (imports made by that are plain ones), and
        for good if it cannot load: then compatfix steps aside."""
        try:
            from compatfix import _engine

            return _engine.handler_for(self)
        except Exception as exc:
            # Never make an import fail because compatfix itself is broken.
            self.packages = set()
            import os

            if os.environ.get("COMPATFIX_STRICT", "").strip().lower() in ("1", "true", "yes", "on"):
                raise
            sys.stderr.write(
                "compatfix: could not load its shims (%s: %s); the program goes on without "
                "compatfix. Set COMPATFIX=0 to silence this.\n" % (type(exc).__name__, exc)
            )
            return None

    def invalidate_caches(self) -> None:
        pass


def installed_finder() -> "CompatfixFinder | None":
    for finder in sys.meta_path:
        if getattr(type(finder), "is_compatfix_finder", False):
            return finder
    return None


_activate_lock = _thread.allocate_lock()


def activate(source: str) -> "CompatfixFinder":
    """Install the finder once per process (idempotent) and remember who asked first."""
    global activated_by
    with _activate_lock:
        finder = installed_finder()
        if finder is None:
            finder = CompatfixFinder()
            sys.meta_path.insert(0, finder)
            if activated_by is None:
                activated_by = source
            import os

            if os.environ.get("COMPATFIX_REPORT") and not os.environ.get("COMPATFIX_RUN_ID"):
                start_run()
    # Targets imported before activation (an interactive session, a late sitecustomize):
    # loading the engine applies their shims.
    if finder.handler is None and any(name in sys.modules for name in finder.packages):
        finder.load_handler()
    return finder


def start_run() -> None:
    """Name a new run: every process of the tree (launcher workers, spawn children)
    inherits the id and adds its record to the same report."""
    import os

    os.environ["COMPATFIX_RUN_ID"] = "%d-%s" % (os.getpid(), os.urandom(4).hex())


def bootstrap() -> None:
    """Zero-argument start-up hook named by ``compatfix.pth`` and ``compatfix.start``."""
    if _switched_off():
        return
    try:
        activate("pth")
    except Exception as exc:  # never let start-up break the interpreter
        sys.stderr.write("compatfix: activation failed and is skipped: %r\n" % (exc,))
