"""What compatfix's wrappers cost once a program runs: per call, in a training step, and
to ``torch.compile`` / ``torch.jit.script`` (a benchmark, not a test).

    .venvs/modern/bin/python benchmarks/bench_hot_path.py [--calls N] [--steps N] [--rounds N]

* Per call: every torch callable a shim wraps here (``compatfix.patching.is_patched``),
  timed against its original (``compatfix.get_original``) in the same process with
  ``timeit``, interleaved, best of ``--rounds``: ns per call and the ratio.
* A training step (forward, backward, SGD) of a small transformer encoder and of a small
  CNN, in two children, one with compatfix on and one with ``COMPATFIX=0``, started
  alternately round by round; the ratio of the medians of their CPU time per step.
  With ``--instructions``, the same steps are counted in instructions (valgrind's
  callgrind, as ``bench_startup.py --instructions`` counts): each child runs once with
  ``--low-steps`` and once with ``--high-steps`` steps after the same warm-up, and the
  difference divided by the difference in steps is the cost of one step, free of the
  import and warm-up around it. A count does not move with the machine's load; a time does.
* ``torch._dynamo.explain`` of a function that calls the wrapped methods (``t().eq``,
  ``masked_fill``): graphs and graph breaks with and without compatfix. And whether
  ``torch.jit.script`` of such a function, and of one calling the wrapped ``torch.stft``,
  still compiles.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import timeit

TRAIN = r"""
import gc, json, sys, time
import torch
torch.manual_seed(0)
torch.set_num_threads(1)
kind, steps = sys.argv[1], int(sys.argv[2])
if kind == "transformer":
    model = torch.nn.TransformerEncoder(torch.nn.TransformerEncoderLayer(64, 4, 128, batch_first=True), 2)
    inputs, target = torch.randn(8, 16, 64), torch.randn(8, 16, 64)
    mask = torch.zeros(8, 16, dtype=torch.bool)
    forward = lambda: model(inputs, src_key_padding_mask=mask)
else:
    model = torch.nn.Sequential(
        torch.nn.Conv2d(3, 16, 3, padding=1), torch.nn.BatchNorm2d(16), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
        torch.nn.Conv2d(16, 32, 3, padding=1), torch.nn.ReLU(), torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(),
        torch.nn.Linear(32, 10))
    inputs, labels = torch.randn(16, 3, 32, 32), torch.randint(0, 10, (16,))
    forward = lambda: model(inputs)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
def step():
    optimizer.zero_grad()
    out = forward()
    if kind == "transformer":
        loss = torch.nn.functional.mse_loss(out, target)
    else:
        loss = torch.nn.functional.cross_entropy(out, labels)
        # what old training loops do with the logits: top-1 accuracy through t().eq
        correct = out.topk(1, 1)[1].t().eq(labels.view(1, -1))
        correct[:1].view(-1).float().sum()
    loss.backward()
    optimizer.step()
for _ in range(3):
    step()
# The objects alive after warm-up (torch's and, with compatfix on, its own) go to the permanent
# generation: otherwise a full collection that one child reaches and the other does not, because
# they hold different numbers of objects, outweighs what the wrappers cost.
gc.collect()
gc.freeze()
start = time.process_time()
for _ in range(steps):
    step()
print(json.dumps((time.process_time() - start) / steps))
"""

COMPILE = r"""
import json, warnings
import torch
warnings.simplefilter("ignore")
def old_code(x, mask):
    correct = x.t().eq(0)
    return correct.reshape(-1).float().sum() + x.masked_fill(mask, 1.0).sum()
x, mask = torch.randn(4, 5), torch.rand(4, 5) > 0.5
out = {}
import torch._dynamo
explanation = torch._dynamo.explain(old_code)(x, mask)
out["graphs"], out["graph_breaks"] = explanation.graph_count, explanation.graph_break_count
out["break_reasons"] = sorted({str(b.reason).splitlines()[0][:120] for b in explanation.break_reasons})
def scripted_code(x, mask):
    return x.t().eq(0).float().sum() + x.masked_fill(mask, 1.0).sum() + torch.eq(x, x).float().sum()
try:
    scripted = torch.jit.script(scripted_code)
    out["jit_script"] = bool(torch.equal(scripted(x, mask), scripted_code(x, mask)))
except Exception as error:
    out["jit_script"] = "%s: %s" % (type(error).__name__, str(error).splitlines()[0][:160])
def scripted_spectrum(x):
    return torch.stft(x, 16, window=torch.hann_window(16), return_complex=True).abs().sum()
try:
    signal = torch.randn(256)
    out["jit_script_stft"] = bool(torch.allclose(torch.jit.script(scripted_spectrum)(signal), scripted_spectrum(signal)))
except Exception as error:
    out["jit_script_stft"] = "%s: %s" % (type(error).__name__, str(error).splitlines()[0][:160])
print(json.dumps(out))
"""


def env(compatfix: bool) -> dict[str, str]:
    environment = {k: v for k, v in os.environ.items() if not k.startswith("COMPATFIX")}
    environment["COMPATFIX"] = "1" if compatfix else "0"
    environment.update(OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    return environment


def child(python: str, code: str, args: list[str], compatfix: bool, cwd: str):
    # From a file, not -c: torch.jit.script needs the source of what it compiles.
    script = os.path.join(cwd, "child.py")
    with open(script, "w") as handle:
        handle.write(code)
    out = subprocess.run([python, script, *args], capture_output=True, text=True, env=env(compatfix), cwd=cwd)
    if out.returncode != 0:
        raise SystemExit("child failed (compatfix %s):\n%s" % (compatfix, out.stderr[-3000:]))
    return json.loads(out.stdout.strip().splitlines()[-1])


def per_call(calls: int, rounds: int) -> None:
    import torch

    import compatfix
    from compatfix import patching

    x = torch.randn(4, 5)
    mask = x > 0
    args = {
        "eq": (x.t(), 0), "ne": (x.t(), 0), "lt": (x.t(), 0), "le": (x.t(), 0), "gt": (x.t(), 0), "ge": (x.t(), 0),
        "masked_fill": (x, mask, 1.0), "masked_fill_": (x.clone(), mask, 1.0), "masked_select": (x, mask),
        "masked_scatter": (x, mask, torch.ones(20)), "masked_scatter_": (x.clone(), mask, torch.ones(20)),
    }
    print("\nper call (timeit, best of %d x %d calls), wrapped / original:" % (rounds, calls))
    for owner, label in ((torch.Tensor, "Tensor"), (torch, "torch")):
        for name in sorted(args):
            if not patching.is_patched(owner, name):
                continue
            wrapped, original = getattr(owner, name), compatfix.get_original(owner, name)
            best = {"wrapped": float("inf"), "original": float("inf")}
            for round_ in range(rounds):
                for which, function in (("wrapped", wrapped), ("original", original))[:: 1 if round_ % 2 else -1]:
                    seconds = timeit.timeit(lambda: function(*args[name]), number=calls)
                    best[which] = min(best[which], seconds / calls)
            print("  %-24s %8.0f ns  vs %8.0f ns  ratio %.2f" % (
                "%s.%s" % (label, name), best["wrapped"] * 1e9, best["original"] * 1e9,
                best["wrapped"] / best["original"]))


def step_instructions(python: str, low: int, high: int) -> None:
    from bench_startup import instructions  # the start-up benchmark's callgrind count, fresh byte-code and all

    cwd = tempfile.mkdtemp(prefix="compatfix-hot-path-instructions-")
    os.utime(cwd, (0, 1_000_000_000))  # an old folder: the plugin-scan cache's key stays put
    print("\ntraining step in instructions (callgrind), (count at %d steps - count at %d) / %d:" % (
        high, low, high - low))
    print("  | model | on | off | ratio |\n  |---|---|---|---|")
    for kind in ("transformer", "cnn"):
        per_step = {}
        for flag in (True, False):
            counts = [instructions(python, TRAIN, env(flag), cwd, (kind, str(steps))) for steps in (low, high)]
            per_step[flag] = (counts[1] - counts[0]) / (high - low)
        print("  | %s | %.2fM | %.2fM | %.4f |" % (
            kind, per_step[True] / 1e6, per_step[False] / 1e6, per_step[True] / per_step[False]), flush=True)
    shutil.rmtree(cwd, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=20000)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--skip-per-call", action="store_true")
    parser.add_argument("--instructions", action="store_true",
                        help="count a training step in instructions with callgrind (slow: minutes per child)")
    parser.add_argument("--low-steps", type=int, default=2)
    parser.add_argument("--high-steps", type=int, default=12)
    options = parser.parse_args()
    cwd = tempfile.mkdtemp(prefix="compatfix-hot-path-")  # not the repository: its compatfix/ would shadow
    python = sys.executable
    if not options.skip_per_call:
        per_call(options.calls, options.rounds)
    print("\ntraining step, CPU time per step (one thread), medians of %d alternating rounds:" % options.rounds)
    for kind in ("transformer", "cnn"):
        times: dict[bool, list[float]] = {True: [], False: []}
        for round_ in range(options.rounds):
            for flag in (True, False) if round_ % 2 == 0 else (False, True):
                times[flag].append(child(python, TRAIN, [kind, str(options.steps)], flag, cwd))
        on, off = statistics.median(times[True]), statistics.median(times[False])
        print("  %-12s on %.2f ms  off %.2f ms  ratio %.3f" % (kind, on * 1e3, off * 1e3, on / off))
    if options.instructions:
        step_instructions(python, options.low_steps, options.high_steps)
    print("\ntorch._dynamo.explain and torch.jit.script of code calling t().eq and masked_fill:")
    for flag in (True, False):
        print("  compatfix %-3s %s" % ("on" if flag else "off", json.dumps(child(python, COMPILE, [], flag, cwd))))
    shutil.rmtree(cwd, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
