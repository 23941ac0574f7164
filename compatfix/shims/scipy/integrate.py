"""Shims for ``scipy.integrate``: simps, trapz and cumtrapz, renamed in SciPy 1.6 and
removed in 1.14."""

from __future__ import annotations

from compatfix.patching import restore_names
from compatfix.registry import Shim


def _simps(integrate):
    import numpy as np

    def simps(y, x=None, dx=1.0, axis=-1, even="avg"):
        """SciPy < 1.14's Simpson rule. With an even number of samples, Simpson's rule
        covers N - 1 of them and the trapezoid rule the remaining interval: 'first' puts
        the trapezoid last, 'last' puts it first, 'avg' averages the two."""
        y = np.moveaxis(np.asarray(y, dtype=float), axis, -1)
        if x is not None:
            x = np.asarray(x, dtype=float)
            x = np.moveaxis(x, axis, -1) if x.ndim == y.ndim else x
        n = y.shape[-1]
        if n % 2 == 1 or n < 3:
            return integrate.simpson(y, x=x, dx=dx, axis=-1)
        if even not in ("avg", "first", "last"):
            raise ValueError("Parameter 'even' must be 'first', 'last', or 'avg'.")

        def simpson_over(part):
            return integrate.simpson(y[..., part], x=None if x is None else x[..., part], dx=dx, axis=-1)

        def trapezoid_at(i):
            width = dx if x is None else x[..., i + 1] - x[..., i]
            return width * (y[..., i] + y[..., i + 1]) / 2.0

        first = simpson_over(slice(None, -1)) + trapezoid_at(n - 2) if even != "last" else None
        last = simpson_over(slice(1, None)) + trapezoid_at(0) if even != "first" else None
        if even == "avg":
            return (first + last) / 2.0
        return first if even == "first" else last

    return simps


def restore_renamed(integrate) -> None:
    names = {
        "simps": _simps(integrate),
        "trapz": integrate.trapezoid,
        "cumtrapz": integrate.cumulative_trapezoid,
    }
    restore_names(integrate, names, "scipy.integrate.renamed")


SHIMS = (
    Shim(
        "scipy.integrate.renamed",
        targets=["scipy.integrate"],
        requires={"scipy": ">=1.14"},
        apply=restore_renamed,
        restores=["simps", "trapz", "cumtrapz"],
        broke="SciPy 1.14 (2024-06) removed scipy.integrate.simps, trapz and cumtrapz (renamed "
        "simpson, trapezoid, cumulative_trapezoid in 1.6)",
        summary="restore trapz and cumtrapz as aliases and simps with its old even='avg' rule",
        replacement="scipy.integrate.simpson, trapezoid and cumulative_trapezoid",
        renames={"scipy.integrate.trapz": "scipy.integrate.trapezoid",
                 "scipy.integrate.cumtrapz": "scipy.integrate.cumulative_trapezoid"},
        rewrites={"scipy.integrate.simps": "scipy.integrate.simpson (its even='avg' rule for an even number "
                  "of samples is gone: results differ there)"},
    ),
)
