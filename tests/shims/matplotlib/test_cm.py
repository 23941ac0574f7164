"""matplotlib.cm.get_cmap and register_cmap (removed in matplotlib 3.9) against the real
matplotlib of the stack: missing with compatfix off; with it on, the colours viridis and
gray are published with (viridis runs from (0.267004, 0.004874, 0.329415) to (0.993248,
0.906157, 0.143936); gray's middle is grey 0.5) and the rules of matplotlib 3.5's
docstrings: name=None is rcParams["image.cmap"], lut resamples, a Colormap is returned
as it is, an unknown name is a ValueError, registering a name again replaces it with a
warning and a builtin name is refused."""

from __future__ import annotations

import pytest

from support import clean_env, run_python

pytestmark = pytest.mark.stack("modern")

PRESENT = "import matplotlib.cm as cm\nprint(hasattr(cm, 'get_cmap'), hasattr(cm, 'register_cmap'))"


def test_they_are_missing_without_compatfix():
    assert run_python(code=PRESENT, compatfix=False).stdout.split() == ["False", "False"]
    disabled = clean_env(COMPATFIX_DISABLE="matplotlib.cm.get_cmap")
    assert run_python(code=PRESENT, env=disabled).stdout.split() == ["False", "False"]


def test_get_cmap_and_register_cmap_keep_their_meaning():
    result = run_python(
        code="""
        import math, warnings
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib import cm
        from matplotlib.colors import ListedColormap

        def close(a, b, tol=1e-5):
            return all(math.isclose(x, y, abs_tol=tol) for x, y in zip(a, b))

        VIRIDIS_FIRST, VIRIDIS_LAST = (0.267004, 0.004874, 0.329415, 1.0), (0.993248, 0.906157, 0.143936, 1.0)
        viridis = cm.get_cmap("viridis")
        assert viridis.N == 256 and close(viridis(0.0), VIRIDIS_FIRST) and close(viridis(1.0), VIRIDIS_LAST)
        five = cm.get_cmap("viridis", 5)
        assert five.N == 5 and close(five(0.0), VIRIDIS_FIRST) and close(five(4), VIRIDIS_LAST)
        matplotlib.rcParams["image.cmap"] = "gray"
        assert cm.get_cmap().name == "gray" and close(cm.get_cmap()(0.5), (0.5, 0.5, 0.5, 1.0), tol=0.01)
        mine = ListedColormap([(1.0, 0.0, 0.0), (0.0, 0.0, 1.0)], name="red_blue")
        assert cm.get_cmap(mine) is mine
        assert plt.cm.get_cmap("viridis", 5).N == 5  # the route through pyplot
        try:
            cm.get_cmap("no_such_map")
        except ValueError:
            pass
        else:
            raise AssertionError("an unknown name must be a ValueError")

        cm.register_cmap(cmap=mine)
        assert close(cm.get_cmap("red_blue")(0.0), (1.0, 0.0, 0.0, 1.0))
        assert close(plt.imshow([[0.0, 1.0]], cmap="red_blue").cmap(1.0), (0.0, 0.0, 1.0, 1.0))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            cm.register_cmap("red_blue", ListedColormap([(0.0, 1.0, 0.0), (0.0, 0.0, 0.0)]))
        assert caught and close(cm.get_cmap("red_blue")(0.0), (0.0, 1.0, 0.0, 1.0))
        for call in (lambda: cm.register_cmap("viridis", mine), lambda: cm.register_cmap(cmap="not a map")):
            try:
                call()
            except ValueError:
                pass
            else:
                raise AssertionError("must be a ValueError")
        print("ok")
        """
    )
    assert result.stdout.split() == ["ok"], result.stderr[-3000:]
