"""Doctor check: would an OpenMMLab package fail its mmcv version assert at import?"""

from __future__ import annotations

import os

from compatfix.doctor._finding import Finding
from compatfix.doctor._packages import _package_dir, _source_version
from compatfix.openmmlab.versions import MAX_NAMES, MIN_NAMES, assert_inclusive, constants, digit_version, parse


# --- OpenMMLab packages' mmcv version assert ---------------------------------------------

# Packages that assert ``MIN <= mmcv.__version__ <(=) MAX`` when imported, and the names
# of their bounds: mmseg 0.x/1.x use MMCV_MIN/MMCV_MAX, mmdet 2.x and its siblings
# mmcv_minimum_version/mmcv_maximum_version.
_MMCV_DEPENDENTS = ("mmseg", "mmdet", "mmdet3d", "mmcls", "mmpose")
def check_mm_version_pair(path: list[str] | None = None) -> list[Finding]:
    """Would ``import mmseg`` (mmdet, ...) fail its mmcv version assert?"""
    findings = []
    mmcv_dir = _package_dir("mmcv", path)
    mmcv_version = _source_version(mmcv_dir) if mmcv_dir is not None else None
    for package in _MMCV_DEPENDENTS:
        package_dir = _package_dir(package, path)
        if package_dir is None:
            continue
        init = os.path.join(package_dir, "__init__.py")
        tree = parse(init)
        found = constants(tree)
        low = next((found[n] for n in MIN_NAMES if isinstance(found.get(n), str)), None)
        high = next((found[n] for n in MAX_NAMES if isinstance(found.get(n), str)), None)
        inclusive = assert_inclusive(tree) if tree is not None else {}
        if low is None or high is None or len(inclusive) != 2:
            continue  # no version assert: importing it does not check mmcv's version
        upper = "<=" if inclusive["max"] else "<"
        install = "`MMCV_WITH_OPS=1 pip install --no-build-isolation \"mmcv-full>=%s,%s%s\"`" % (
            low, upper, high)
        if mmcv_dir is None:
            findings.append(Finding(
                "mm-version-pair", "error",
                "import %s will fail: it imports mmcv, which is not installed" % package,
                "Install mmcv>=%s, %s%s with its ops: %s." % (low, upper, high, install),
            ))
            continue
        have, low_v, high_v = (digit_version(v) for v in (mmcv_version or "", low, high))
        if have is None or low_v is None or high_v is None:
            continue
        above_min = low_v <= have if inclusive["min"] else low_v < have
        below_max = have <= high_v if inclusive["max"] else have < high_v
        if above_min and below_max:
            continue
        findings.append(Finding(
            "mm-version-pair", "error",
            "import %s will fail: MMCV==%s is used but incompatible. "
            "Please install mmcv>=%s, %s%s." % (package, mmcv_version, low, upper, high),
            "%s asserts this range when it is imported. "
            "Install an mmcv in range (%s) or a %s release whose range includes mmcv %s. "
            "Editing the bound in %s, or accepting the risk with "
            "COMPATFIX_ENABLE=mmcv.relaxed_version_assert, silences the assert, not the "
            "API changes it guards against." % (package, install, package, mmcv_version, init),
        ))
    return findings


