"""Doctor check: mmcv without its compiled ops (mmcv._ext), and what compatfix provides
in their place."""

from __future__ import annotations

import os
from importlib import machinery

from compatfix._versions import release_tuple

from compatfix.doctor._finding import Finding
from compatfix.doctor._packages import _package_dir, _source_version


# --- mmcv compiled ops ------------------------------------------------------------------


def check_mmcv_ops(path: list[str] | None = None) -> list[Finding]:
    """mmcv 1.x without its compiled ops (the lite build), or mmcv 2.x under 1.x-era code."""
    mmcv_dir = _package_dir("mmcv", path)
    if mmcv_dir is None:
        return []
    version = _source_version(mmcv_dir)
    if version is None:
        return []
    if release_tuple(version)[0] >= 2:
        return [Finding(
            "mmcv-ops", "info",
            "mmcv %s is 2.x: `mmcv.runner`, `mmcv.parallel`, `mmcv.Config` and the rest "
            "of 1.x's training framework are gone (moved to mmengine), so 1.x-era code "
            "(mmseg 0.x, mmdet 2.x) cannot import" % version,
            "For 2020-22 code install mmcv 1.x with its ops: `pip uninstall mmcv` then "
            "`MMCV_WITH_OPS=1 pip install --no-build-isolation mmcv-full==1.7.2` (builds "
            "from source).",
        )]
    # ext_loader imports mmcv._ext by name, so only a binary this interpreter can load
    # counts; one built for another Python version is as good as missing.
    has_ops = any(os.path.isfile(os.path.join(mmcv_dir, "_ext" + suffix))
                  for suffix in machinery.EXTENSION_SUFFIXES)
    if has_ops:
        return []
    provided = _provided_by_compatfix(version)
    if provided is not None:
        return [provided]
    return [Finding(
        "mmcv-ops", "warning",
        "mmcv %s at %s has no compiled ops (mmcv/_ext is missing: the lite `mmcv` build, "
        "not `mmcv-full`): `import mmcv.ops`, and with it model imports such as "
        "`import mmseg.models` or `import mmdet.models`, fail with "
        "\"No module named 'mmcv._ext'\"" % (version, mmcv_dir),
        "Rebuild mmcv with its ops: `pip uninstall mmcv` then `MMCV_WITH_OPS=1 pip "
        "install --no-build-isolation mmcv-full==%s` (compiles for minutes; CUDA ops need "
        "a CUDA toolkit matching torch's CUDA version). Code that never touches mmcv.ops "
        "(configs, runner, mmcv.cnn) works without them." % version,
    )]




def _provided_by_compatfix(version: str) -> Finding | None:
    """The finding for a lite mmcv whose ``mmcv._ext`` compatfix's stand-in provides here
    (the ``mmcv._ext`` shim is on and its range covers ``version``); None otherwise."""
    from compatfix import _versions
    from compatfix._settings import Settings
    from compatfix.mmcv_standin.ext import fallback_names
    from compatfix.shims.mmcv._ext import SHIMS

    [shim] = SHIMS
    enabled, _ = Settings.from_environ().is_enabled(shim.name, shim.default)
    if not enabled or not _versions.in_range(version, shim.requires["mmcv"]):
        return None
    return Finding(
        "mmcv-ops", "info",
        "mmcv %s has no compiled ops (the lite build); compatfix provides mmcv._ext with "
        "torch/torchvision fallbacks for %s, so `import mmcv.ops` (and the model "
        "imports of mmseg and mmdet, which import it) no longer fail for want of it. Every other op imports but raises MissingCompiledOpError, "
        "naming the op, when it is called. Without compatfix (COMPATFIX=0, or "
        "COMPATFIX_DISABLE=mmcv._ext) `import mmcv.ops` fails with \"No module named "
        "'mmcv._ext'\"" % (version, fallback_names()),
        "Nothing to do for models built from these ops. For a model that calls another op, "
        "install mmcv-full built with its ops for this torch (`MMCV_WITH_OPS=1 pip install "
        "--no-build-isolation mmcv-full==%s`, compiles for minutes; CUDA ops need a CUDA "
        "toolkit matching torch's), or choose a layer that does not need it." % version,
    )
