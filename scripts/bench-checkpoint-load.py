"""Benchmark: torch.load of a ~100 MB checkpoint that holds data-only classes beside its
tensors (an argparse.Namespace, numpy scalars and arrays), through compatfix's policy
(torch's weights-only loader with the data-only classes) against torch's own full-pickle
load (weights_only=False) of the same file, side by side in one run.

    python scripts/bench-checkpoint-load.py [--megabytes 100] [--repeats 7]

Run it with a venv's interpreter where compatfix is installed. Prints the CPU time of
each load (medians of interleaved repeats) and their ratio; docs/checkpoints.md quotes it.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--megabytes", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=7)
    options = parser.parse_args()

    import numpy
    import torch

    # 2 MiB tensors, as a ViT-B checkpoint's (330 MB, ~200 tensors) average
    layers = {"layer%d.weight" % index: torch.randn(512, 1024) for index in range(options.megabytes // 2)}
    checkpoint = {
        "model": layers,
        "args": argparse.Namespace(lr=0.1, epochs=300, model="deit_tiny", output_dir="/runs/exp1"),
        "best_acc": numpy.float64(81.5),
        "step": numpy.int64(1200),
        "mean": numpy.array([0.485, 0.456, 0.406]),
        "lr_history": numpy.linspace(0.1, 0.0, 300),
        "epoch": 300,
    }
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "checkpoint.pth")
        torch.save(checkpoint, path)
        size = os.path.getsize(path)
        weights = os.path.join(folder, "weights.pth")
        torch.save(layers, weights)  # the tensors alone: what torch's weights-only loader costs by itself
        timings: dict[str, list[float]] = {"full pickle": [], "compatfix": [], "torch weights-only, tensors only": []}
        for _ in range(options.repeats):
            for name, load in (("full pickle", lambda: torch.load(path, weights_only=False)),
                               ("compatfix", lambda: torch.load(path)),
                               ("torch weights-only, tensors only", lambda: torch.load(weights, weights_only=True)
                                | {"args": argparse.Namespace(), "model": layers})):
                started = time.process_time()
                loaded = load()
                timings[name].append(time.process_time() - started)
                assert type(loaded["args"]) is argparse.Namespace and torch.equal(loaded["model"]["layer0.weight"],
                                                                                   layers["layer0.weight"])
    full, ours, torch_only = (statistics.median(timings[name]) for name in timings)
    print("checkpoint: %.0f MB, %d tensors, %d repeats (CPU time, median)" % (size / 1e6, len(layers), options.repeats))
    print("torch.load(weights_only=False):                 %.4f s" % full)
    print("torch.load() under compatfix:                   %.4f s  (%.2fx full pickle)" % (ours, ours / full))
    print("torch's weights-only load of the tensors alone: %.4f s  (%.2fx full pickle)" % (torch_only, torch_only / full))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
