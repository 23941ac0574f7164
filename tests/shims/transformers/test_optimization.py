"""transformers 4.x's AdamW (removed in transformers 4.50) against the real transformers 4.57.6 and 5.24:
missing with compatfix off; with it on, its updates are 4.x's formula, written out here in
plain floats: Adam's moments, the step ``lr * sqrt(1 - b2^t) / (1 - b1^t)`` (``lr`` alone
with ``correct_bias=False``), then the weight decay ``p -= lr * wd * p`` on the updated
weights, which is not what torch.optim.AdamW does."""

from __future__ import annotations

import pytest

from support import clean_env, run_python

pytestmark = pytest.mark.stack("py312", "transformers4")

IMPORTS = """
import warnings
warnings.simplefilter("ignore")
try:
    from transformers import AdamW
    print("top", AdamW.__module__)
except ImportError:
    print("top missing")
try:
    from transformers.optimization import AdamW
    print("optimization", AdamW.__module__)
except ImportError:
    print("optimization missing")
"""


def test_adamw_is_missing_without_compatfix():
    result = run_python(code=IMPORTS, compatfix=False)
    assert result.stdout.split("\n")[:2] == ["top missing", "optimization missing"], result.stderr[-2000:]
    result = run_python(code=IMPORTS, env=clean_env(COMPATFIX_DISABLE="transformers.AdamW"))
    assert result.stdout.split("\n")[:2] == ["top missing", "optimization transformers.optimization"], result.stderr
    result = run_python(code=IMPORTS, env=clean_env(COMPATFIX_DISABLE="transformers.optimization.AdamW"))
    assert result.stdout.split("\n")[:2] == ["top transformers.optimization", "optimization missing"], result.stderr


def test_adamw_follows_the_4x_update():
    result = run_python(
        code="""
        import math
        import torch
        import transformers
        from transformers import AdamW
        assert AdamW is transformers.optimization.AdamW

        start = [0.5, -1.25, 2.0]
        grads = [[0.1, -0.2, 0.3], [-0.4, 0.05, 0.2], [0.3, 0.3, -0.1]]

        def by_hand(lr, betas, eps, wd, correct_bias):
            b1, b2 = betas
            p, m, v = list(start), [0.0] * 3, [0.0] * 3
            for t, g in enumerate(grads, 1):
                for i in range(3):
                    m[i] = b1 * m[i] + (1 - b1) * g[i]
                    v[i] = b2 * v[i] + (1 - b2) * g[i] * g[i]
                    step = lr * math.sqrt(1 - b2 ** t) / (1 - b1 ** t) if correct_bias else lr
                    p[i] = p[i] - step * m[i] / (math.sqrt(v[i]) + eps)
                    p[i] = p[i] - lr * wd * p[i]
            return p

        def run(optimizer_class, **options):
            weight = torch.nn.Parameter(torch.tensor(start, dtype=torch.float64))
            optimizer = optimizer_class([weight], **options)
            for g in grads:
                weight.grad = torch.tensor(g, dtype=torch.float64)
                optimizer.step()
            return weight.detach().tolist(), optimizer

        for options in ({"lr": 0.1, "weight_decay": 0.3},
                        {"lr": 0.05, "betas": (0.8, 0.9), "eps": 1e-3, "weight_decay": 0.01, "correct_bias": False},
                        {"lr": 0.2}):
            got, optimizer = run(AdamW, **options)
            expected = by_hand(options["lr"], options.get("betas", (0.9, 0.999)), options.get("eps", 1e-6),
                               options.get("weight_decay", 0.0), options.get("correct_bias", True))
            assert all(abs(a - b) < 1e-12 for a, b in zip(got, expected)), (options, got, expected)
            state = optimizer.state[optimizer.param_groups[0]["params"][0]]
            assert state["step"] == 3 and set(state) == {"step", "exp_avg", "exp_avg_sq"}
        # the decay order and eps are 4.x's own: torch's AdamW lands elsewhere
        theirs, _ = run(torch.optim.AdamW, lr=0.1, weight_decay=0.3)
        ours, _ = run(AdamW, lr=0.1, weight_decay=0.3)
        assert max(abs(a - b) for a, b in zip(theirs, ours)) > 1e-4
        assert AdamW([torch.nn.Parameter(torch.zeros(1))]).defaults["eps"] == 1e-6
        # a closure's loss comes back, as from any torch optimizer
        weight = torch.nn.Parameter(torch.ones(2))
        optimizer = AdamW([weight], lr=0.1)
        def closure():
            optimizer.zero_grad()
            loss = (weight ** 2).sum()
            loss.backward()
            return loss
        assert optimizer.step(closure).item() == 2.0
        try:
            AdamW([weight], lr=-1.0)
        except ValueError as error:
            assert "Invalid learning rate" in str(error)
        else:
            raise AssertionError("a negative learning rate was accepted")
        print("ok")
        """
    )
    assert result.stdout.split() == ["ok"], result.stderr[-3000:]
