"""What CPU mode's precision policy costs (issue 12, item 6): the step time of a
half-precision training loop under ``--device cpu`` against the same loop in float32 with
the casts removed by hand.

Run it with the interpreter of the venv to measure (a benchmark, not a test)::

    .venvs/modern/bin/python benchmarks/bench_cpu_half.py [--steps N] [--rounds N] [--threads N] [--float16]

The programs
------------
``SCRIPT`` is a small 2020-22 style loop over a convolutional net: ``model.cuda().half()``
(apex O2/O3 or ``network_to_half`` style, batch norms put back to float32 as they do),
``images.cuda().half()`` and mmcv ``auto_fp16``-style ``.to(torch.float16)`` casts between
stages every step, the loss taken in float32 (``.float()``), SGD.

* ``cpu-mode``: ``python -m compatfix --device cpu bench.py half`` (the policy makes every
  cast float32);
* ``hand-port``: ``python bench.py float``: the same loop without ``.cuda()`` and without
  the casts, which is what a person porting it to the CPU writes;
* with ``--float16``, also ``no-policy``: CPU mode with ``--disable cpu.torch.half_as_float32``,
  so the loop computes in float16 on the CPU (slow: fewer steps are timed).

Each run is one fresh interpreter; the child times its own loop (``time.perf_counter``
around the timed steps, after two warm-up steps), so start-up and imports are left out.
Each variant runs ``--rounds`` times (default 3, alternating, the order reversed every
other round) and the median is reported; ``--rounds 1`` is the one run the issue asks for,
but on a shared machine one run can be off by 50% (seen here), so the median is the row.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile

SCRIPT = '''\
import sys, time
import torch
import torch.nn as nn
import torch.nn.functional as F

mode, steps = sys.argv[1], int(sys.argv[2])
torch.manual_seed(0)
torch.set_num_threads(int(sys.argv[3]))
half = mode == "half"


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU())
        self.body = nn.Sequential(nn.Conv2d(64, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU(),
                                  nn.Conv2d(64, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU())
        self.head = nn.Conv2d(64, 5, 1)

    def forward(self, x):
        x = self.stem(x)
        if half:
            x = x.to(torch.float16)  # an auto_fp16-style cast between stages
        x = self.body(x)
        return self.head(x)


model = Net()
if half:
    model = model.cuda().half()
    for m in model.modules():  # keep_batchnorm_fp32, as apex O2 / network_to_half do
        if isinstance(m, nn.BatchNorm2d):
            m.float()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
images, labels = torch.randn(8, 3, 32, 32), torch.randint(0, 5, (8, 32, 32))
if half:
    images, labels = images.cuda(), labels.cuda()


def step():
    x = images.half() if half else images
    loss = F.cross_entropy(model(x).float(), labels)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return float(loss)


for _ in range(2):
    step()
start = time.perf_counter()
for _ in range(steps):
    loss = step()
elapsed = time.perf_counter() - start
print("RESULT %.6f %.6f %s" % (elapsed / steps, loss, next(model.parameters()).dtype))
'''


def run(python: str, script: str, args: list[str], prefix: list[str], env: dict) -> tuple[float, float, str]:
    completed = subprocess.run([python, *prefix, script, *args], env=env, capture_output=True, text=True)
    lines = [line for line in completed.stdout.splitlines() if line.startswith("RESULT ")]
    if not lines:
        raise SystemExit("the run failed:\n" + completed.stdout[-2000:] + completed.stderr[-3000:])
    _, per_step, loss, dtype = lines[-1].split()
    return float(per_step), float(loss), dtype


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=3, help="runs of each variant, alternating (median)")
    parser.add_argument("--float16", action="store_true", help="also time the loop in float16 (slow)")
    args = parser.parse_args()
    env = {k: v for k, v in os.environ.items() if not k.startswith("COMPATFIX")}
    env["PYTHONWARNINGS"] = "ignore"
    with tempfile.TemporaryDirectory() as folder:
        script = os.path.join(folder, "bench.py")
        with open(script, "w") as handle:
            handle.write(SCRIPT)
        python = sys.executable
        cpu = ["-m", "compatfix", "--device", "cpu"]
        steps, threads = str(args.steps), str(args.threads)
        variants = [("cpu-mode (half path)", ["half", steps, threads], cpu),
                    ("hand-port (float32)", ["float", steps, threads], [])]
        samples: dict[str, list] = {name: [] for name, _, _ in variants}
        for round_ in range(args.rounds):  # alternating, the order reversed every other round
            for name, child_args, prefix in (variants if round_ % 2 == 0 else variants[::-1]):
                samples[name].append(run(python, script, child_args, prefix, env))
        if args.float16:
            name = "no-policy (float16)"
            samples[name] = [run(python, script, ["half", str(max(2, args.steps // 5)), threads],
                                 cpu + ["--disable", "cpu.torch.half_as_float32"], env)]
    rows = [(name, statistics.median(s[0] for s in runs), runs[-1][1], runs[-1][2], len(runs))
            for name, runs in samples.items()]
    base = rows[1][1]
    print("| variant | ms per step (median) | runs | vs hand port | final loss | parameters |")
    print("|---|---|---|---|---|---|")
    for name, per_step, loss, dtype, count in rows:
        print("| %s | %.1f | %d | %.2fx | %.4f | %s |" % (name, per_step * 1000, count, per_step / base, loss, dtype))


if __name__ == "__main__":
    main()
