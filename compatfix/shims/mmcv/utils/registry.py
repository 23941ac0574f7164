"""mmcv 1.x registries: a user's class wins over the library's class of the same name.

``mmcv.utils.registry_user_class_wins``
    Research code registers its own modules into the registries of mmcv/mmseg/mmdet
    (``@BACKBONES.register_module()`` in a repo's ``backbone/beit.py``). When a later
    library release adds a module of the same name (mmseg 0.23 added ``BEiT``, 0.15
    ``SwinTransformer`` and ``VisionTransformer``, ...), importing the research code
    fails in ``Registry._register_module`` with ``KeyError: 'BEiT is already registered
    in models'``: the library registered first, when its ``models`` package was
    imported, and the user's registration has no ``force=True``. The code was written
    when the library had no such name, so it meant its own class.

    The fix: a registration that would raise this error is made with ``force=True``
    (the user's class replaces the library's in that registry) when the class or
    function being registered comes from another top-level package than the one
    registered under that name. Each replacement is reported once with both classes and
    counted in the compatfix report. A package that registers a name twice itself (the
    library twice, or the user's code twice) still fails as before: that is a real
    mistake, not a version clash.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any, Iterable

from compatfix import patching
from compatfix.registry import AFTER_IMPORT, RISK_BEHAVIOUR, Shim

SHIM_NAME = "mmcv.utils.registry_user_class_wins"


def _package_of(obj) -> str:
    """The top-level package of the module that defines ``obj``."""
    return (getattr(obj, "__module__", None) or "?").partition(".")[0]


def _qualified(obj) -> str:
    return "%s.%s" % (getattr(obj, "__module__", "?"), getattr(obj, "__qualname__", obj))


def clashes_from_other_packages(registry: Any, module: Any, names: Iterable[str]) -> list[tuple[str, Any]]:
    """The ``(name, registered)`` entries that registering ``module`` under ``names``
    would clash with, if every clash is with another top-level package's entry; an
    empty list if there is no clash or any clash is with the same package."""
    registered = registry._module_dict
    clashes = [(name, registered[name]) for name in names if name in registered]
    own = _package_of(module)
    if any(_package_of(existing) == own for _, existing in clashes):
        return []
    return clashes


def _make_register_module(original):
    import inspect  # here, not at module level: it costs ~5 ms of every engine load

    # The first parameter is ``module`` in mmcv 1.7, ``module_class`` in 1.3, which
    # passes it by keyword: bind the call to the original's own signature.
    signature = inspect.signature(original)

    def _register_module(self, *args, **kwargs):
        call = signature.bind(self, *args, **kwargs)
        call.apply_defaults()
        arguments = call.arguments
        if not arguments.get("force"):
            module = next(value for key, value in arguments.items() if key.startswith("module") and key != "module_name")
            module_name = arguments.get("module_name")
            if module_name is None:
                names = [getattr(module, "__name__", None)]
            elif isinstance(module_name, str):
                names = [module_name]
            else:
                names = list(module_name)
            clashes = clashes_from_other_packages(self, module, names)
            if clashes:
                _report_replacements(self, module, clashes)
                arguments["force"] = True
        return original(*call.args, **call.kwargs)

    return _register_module


def _report_replacements(registry, module, clashes) -> None:
    from compatfix import _messages

    for name, existing in clashes:
        what = "%s in %s: %s replaces %s" % (name, registry.name, _qualified(module), _qualified(existing))
        patching.record_redirect(SHIM_NAME, what)
        _messages.say(
            "%s is already registered in %s by %s (%s); the registration from %s now "
            "replaces it, as register_module(force=True) would. This code was written for "
            "a release without that name: configs that say type=%r now build %s."
            % (name, registry.name, _package_of(existing), _qualified(existing),
               _package_of(module), name, _qualified(module)),
            key=what,
        )


def patch_registry(module: ModuleType) -> None:
    """Wrap ``Registry._register_module`` in ``mmcv.utils.registry``."""
    patching.wrap(module.Registry, "_register_module", _make_register_module, SHIM_NAME)


SHIMS = (
    Shim(
        SHIM_NAME,
        targets=["mmcv.utils.registry"],
        requires={"mmcv": ">=1.0,<2.0"},
        kind=AFTER_IMPORT,
        apply=patch_registry,
        risk=RISK_BEHAVIOUR,
        broke="newer mmseg/mmdet releases register modules under names that research code "
        "registers itself (mmseg 0.23 added BEiT, 0.15 SwinTransformer): importing that code "
        "fails with KeyError: 'BEiT is already registered in models' (mmcv 1.x "
        "Registry._register_module without force=True)",
        summary="a registration clashing only with another top-level package's entry is made "
        "with force=True (the later, user's class wins), reported once per name; a package "
        "registering a name twice itself still fails",
        replacement="@MODELS.register_module(force=True) on the user's class, or a name of its own",
    ),
)
