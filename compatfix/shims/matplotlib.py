"""Shims for matplotlib: the ``matplotlib.blocking_input`` module that matplotlib 3.7
removed, whose ``BlockingInput`` mmcls 0.x imports when its package loads
(``mmcls/core/visualization/image.py``) to wait for a key press or a closed window.

Only ``BlockingInput`` is provided: the mouse and contour-label subclasses were the
machinery behind ``Figure.ginput``, ``waitforbuttonpress`` and ``clabel(manual=True)``,
which today's matplotlib does without them; importing those still fails.
"""

from __future__ import annotations

from numbers import Integral
from typing import Any

from compatfix.patching import restore_names
from compatfix.registry import PROVIDE, Shim


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


SHIMS = (
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
