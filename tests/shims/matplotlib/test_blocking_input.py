"""matplotlib.blocking_input (removed in matplotlib 3.7) against the real matplotlib of
the stack, on the Agg canvas: missing with compatfix off; with it on, ``BlockingInput``
used as mmcls 0.x's visualisation code uses it (``BlockingInput(fig, eventslist=
('key_press_event', 'close_event'))``, then ``blocking_input(n=1, timeout=0)`` until a
key press). The events are sent from a timer thread, as a window system would; what the
call must return is the events sent, in order, and nothing connected afterwards."""

from __future__ import annotations

import pytest

from support import run_python

pytestmark = pytest.mark.stack("modern")


def test_blocking_input_is_missing_without_compatfix():
    result = run_python(code="from matplotlib.blocking_input import BlockingInput", compatfix=False)
    assert result.returncode != 0 and "No module named 'matplotlib.blocking_input'" in result.stderr


def test_blocking_input_collects_the_named_events():
    result = run_python(
        code="""
        import threading, warnings
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.backend_bases import KeyEvent, MouseEvent
        from matplotlib.blocking_input import BlockingInput
        warnings.simplefilter("ignore", UserWarning)  # Agg cannot show a figure

        fig = plt.figure()
        blocking = BlockingInput(fig, eventslist=("key_press_event", "close_event"))
        canvas = fig.canvas
        connected = {name: len(canvas.callbacks.callbacks.get(name, {})) for name in ("key_press_event", "close_event")}

        def press(*keys):
            for key in keys:
                KeyEvent("key_press_event", canvas, key)._process()

        def later(action, *args):
            threading.Timer(0.2, action, args).start()

        later(press, "a")
        events = blocking(n=1, timeout=0)  # no time limit: returns at the first event
        print([event.key for event in events])

        def click_then_keys():
            MouseEvent("button_press_event", canvas, 1, 1, button=1)._process()  # not listened to
            press("b", " ")

        later(click_then_keys)
        print([event.key for event in blocking(n=2, timeout=0)])
        print(blocking(n=1, timeout=0.05))  # nothing comes: the timeout ends the wait
        after = {name: len(canvas.callbacks.callbacks.get(name, {})) for name in connected}
        print(after == connected)
        """,
        timeout=120,
    )
    assert result.stdout.splitlines() == ["['a']", "['b', ' ']", "[]", "True"], result.stderr[-3000:]
