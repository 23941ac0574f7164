"""Shims for matplotlib: the ``matplotlib.blocking_input`` module that matplotlib 3.7
removed, whose ``BlockingInput`` mmcls 0.x imports when its package loads
(``mmcls/core/visualization/image.py``) to wait for a key press or a closed window; and
``matplotlib.cm.get_cmap`` / ``register_cmap``, which matplotlib 3.9 removed, rebuilt on
the ``matplotlib.colormaps`` registry that replaced them.

Only ``BlockingInput`` is provided: the mouse and contour-label subclasses were the
machinery behind ``Figure.ginput``, ``waitforbuttonpress`` and ``clabel(manual=True)``,
which today's matplotlib does without them; importing those still fails.
"""

from __future__ import annotations

from numbers import Integral
from typing import Any

from compatfix.patching import restore_names
from compatfix.registry import AFTER_IMPORT, PROVIDE, Shim


class BlockingInput:
    """matplotlib < 3.7's ``blocking_input.BlockingInput``: called with ``n`` and
    ``timeout``, it shows the figure, runs the canvas's event loop and collects the events
    named in ``eventslist`` until there are ``n`` of them (``n < 1``: until the loop is
    stopped otherwise) or ``timeout`` seconds pass (``0`` or less: no limit), and returns
    the list of events."""

    def __init__(self, fig: Any, eventslist: tuple[str, ...] = ()) -> None:
        self.fig = fig
        self.eventslist = eventslist

    def on_event(self, event: Any) -> None:
        """The callback connected to each event name: collect, then stop once there are ``n``."""
        self.add_event(event)
        self.post_event()
        if len(self.events) >= self.n > 0:
            self.fig.canvas.stop_event_loop()

    def post_event(self) -> None:
        """What subclasses did with each new event; the base class only collects them."""

    def add_event(self, event: Any) -> None:
        self.events.append(event)

    def pop_event(self, index: int = -1) -> None:
        """Drop one collected event, the last by default."""
        self.events.pop(index)

    pop = pop_event

    def cleanup(self) -> None:
        """Disconnect the callbacks this call connected."""
        for callback in self.callbacks:
            self.fig.canvas.mpl_disconnect(callback)
        self.callbacks = []

    def __call__(self, n: int = 1, timeout: float = 30) -> list:
        if not isinstance(n, Integral):
            raise TypeError("'n' must be an instance of numbers.Integral, not a %s" % type(n).__name__)
        self.n = n
        self.events: list = []
        if self.fig.canvas.manager:  # a pyplot figure: show it, as the old call did
            self.fig.show()
        self.callbacks = [self.fig.canvas.mpl_connect(name, self.on_event) for name in self.eventslist]
        try:
            self.fig.canvas.start_event_loop(timeout=timeout)
        finally:  # Ctrl-C too
            self.cleanup()
        return self.events


def provide_blocking_input(module) -> None:
    restore_names(module, {"BlockingInput": BlockingInput}, "matplotlib.blocking_input")


def get_cmap(name: Any = None, lut: int | None = None) -> Any:
    """matplotlib < 3.9's ``cm.get_cmap``: a Colormap is returned as it is; a name (None:
    ``rcParams["image.cmap"]``) gives that registered colormap, resampled to ``lut``
    entries when ``lut`` is given. An unknown name is a ValueError, as it was."""
    import matplotlib
    from matplotlib.colors import Colormap

    if name is None:
        name = matplotlib.rcParams["image.cmap"]
    if isinstance(name, Colormap):
        return name
    if name not in matplotlib.colormaps:
        raise ValueError("%r is not a valid value for name; supported values are %s"
                         % (name, ", ".join(map(repr, sorted(matplotlib.colormaps)))))
    cmap = matplotlib.colormaps[name]
    return cmap if lut is None else cmap.resampled(lut)


def register_cmap(name: str | None = None, cmap: Any = None, *, override_builtin: bool = False) -> None:
    """matplotlib 3.4-3.8's ``cm.register_cmap``: register ``cmap`` under ``name`` (default:
    ``cmap.name``). Registering a name again replaces it with a warning; re-registering a
    builtin colormap is a ValueError. ``override_builtin=True`` used to allow that, but
    today's registry refuses it whatever it is told, so it is a ValueError there too."""
    import matplotlib
    from matplotlib.colors import Colormap

    if name is not None and not isinstance(name, str):
        raise TypeError("'name' must be an instance of str or None, not a %s" % type(name).__name__)
    if name is None:
        try:
            name = cmap.name
        except AttributeError as err:
            raise ValueError("Arguments must include a name or a Colormap") from err
    if not isinstance(cmap, Colormap):
        raise ValueError("You must pass a Colormap instance. You passed %s a %s object." % (cmap, type(cmap)))
    # force: an existing name is replaced with a warning, as register_cmap did; the
    # registry refuses a builtin name itself (a ValueError, as without override_builtin).
    matplotlib.colormaps.register(cmap, name=name, force=True)


def restore_cm_functions(cm) -> None:
    restore_names(cm, {"get_cmap": get_cmap, "register_cmap": register_cmap}, "matplotlib.cm.get_cmap")


SHIMS = (
    Shim(
        "matplotlib.cm.get_cmap",
        targets=["matplotlib.cm"],
        kind=AFTER_IMPORT,
        requires={"matplotlib": ">=3.9"},
        apply=restore_cm_functions,
        restores=["get_cmap", "register_cmap"],
        broke="matplotlib 3.9 (2024-05) removed matplotlib.cm.get_cmap and register_cmap (deprecated in "
        "3.7), which 2020-22 visualisation code calls to colour depth maps, heatmaps and masks "
        "(also reached as matplotlib.pyplot.cm.get_cmap)",
        summary="restore get_cmap(name=None, lut=None) and register_cmap(name=None, cmap=None) on the "
        "matplotlib.colormaps registry",
        replacement="matplotlib.colormaps[name] (.resampled(lut)), matplotlib.colormaps.register(cmap, name=name)",
        rewrites={"matplotlib.cm.get_cmap": "matplotlib.colormaps[name] (or .resampled(lut); "
                  "name=None meant rcParams['image.cmap'])",
                  "matplotlib.cm.register_cmap": "matplotlib.colormaps.register(cmap, name=name)"},
    ),
    Shim(
        "matplotlib.blocking_input",
        targets=["matplotlib.blocking_input"],
        kind=PROVIDE,
        requires={"matplotlib": ">=3.7"},
        apply=provide_blocking_input,
        broke="matplotlib 3.7 (2023-02) removed matplotlib.blocking_input (deprecated in 3.5); mmcls 0.x "
        "imports its BlockingInput when the package loads, so `import mmcls.apis` fails",
        summary="provide matplotlib.blocking_input.BlockingInput (collect n events of the named kinds "
        "through the canvas's event loop, with a timeout)",
        replacement="fig.canvas.mpl_connect plus fig.canvas.start_event_loop / stop_event_loop "
        "(or plt.waitforbuttonpress)",
        rewrites={"matplotlib.blocking_input": "fig.canvas.mpl_connect with start_event_loop/stop_event_loop",
                  "matplotlib.blocking_input.BlockingInput":
                  "fig.canvas.mpl_connect with start_event_loop/stop_event_loop"},
    ),
)
