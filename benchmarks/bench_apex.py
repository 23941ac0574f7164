"""Cost of a training step through compatfix's apex.amp stand-in (O1) against the same
step written by hand with torch.autocast + torch.amp.GradScaler.

Both sides do the same work: forward and loss in an autocast region (on the CPU
float32: CPU autocast is off, the rule CPU mode uses), a loss scaled by 2**16, one
backward, an unscale with the inf/NaN check, and the optimizer step. Rounds alternate
between the two; reported are the ratio of the fastest rounds (stand-in / hand-written,
the least disturbed by other load) and the median of the per-round ratios: 1.00 means
no overhead. The issue's bar is at most 1.01.

    python benchmarks/bench_apex.py [--rounds 15] [--steps 20]
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

from compatfix.apex_standin import amp


def make():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 10))
    return model, torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--threads", type=int, default=1, help="torch threads (1: less noise on a shared machine)")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    data, target = torch.randn(args.batch, 256), torch.randint(0, 10, (args.batch,))

    standin_model, standin_optimizer = make()
    standin_model, standin_optimizer = amp.initialize(standin_model, standin_optimizer, opt_level="O1", verbosity=0)

    def standin_step() -> None:
        loss = F.cross_entropy(standin_model(data), target)
        standin_optimizer.zero_grad()
        with amp.scale_loss(loss, standin_optimizer) as scaled_loss:
            scaled_loss.backward()
        standin_optimizer.step()

    manual_model, manual_optimizer = make()
    scaler = torch.amp.GradScaler("cpu", init_scale=2.0 ** 16)

    def manual_step() -> None:
        with torch.autocast("cpu", enabled=False):  # float32 on the CPU, as the stand-in
            loss = F.cross_entropy(manual_model(data), target)
        manual_optimizer.zero_grad()
        scaler.scale(loss).backward()
        scaler.unscale_(manual_optimizer)  # the stand-in unscales in scale_loss (for clipping)
        scaler.step(manual_optimizer)
        scaler.update()

    def timed(step) -> float:
        start = time.perf_counter()
        for _ in range(args.steps):
            step()
        return (time.perf_counter() - start) / args.steps

    for step in (standin_step, manual_step):  # warm-up
        timed(step)
    ratios, standin_times, manual_times = [], [], []
    for round_index in range(args.rounds):
        order = (standin_step, manual_step) if round_index % 2 == 0 else (manual_step, standin_step)
        times = {step: timed(step) for step in order}
        standin_times.append(times[standin_step])
        manual_times.append(times[manual_step])
        ratios.append(times[standin_step] / times[manual_step])
    print("torch %s, %d threads, batch %d, %d rounds x %d steps" % (
        torch.__version__, torch.get_num_threads(), args.batch, args.rounds, args.steps))
    print("hand-written autocast + GradScaler: %.3f ms/step (fastest round)" % (1e3 * min(manual_times)))
    print("apex.amp stand-in (O1):             %.3f ms/step (fastest round)" % (1e3 * min(standin_times)))
    print("ratio stand-in / hand-written: %.4f (fastest rounds); %.4f (median of per-round ratios)" % (
        min(standin_times) / min(manual_times), statistics.median(ratios)))


if __name__ == "__main__":
    main()
