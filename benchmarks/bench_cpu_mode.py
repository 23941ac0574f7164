"""What CPU mode costs: a CUDA training script under ``--device cpu`` against the same
script ported to the CPU by hand.

Run it with the interpreter of the venv to measure (a benchmark, not a test)::

    .venvs/modern/bin/python benchmarks/bench_cpu_mode.py [--rounds N] [--steps N] [--threads N]

The two programs
----------------
``TRAIN_SCRIPT`` below is a small 2020-22 style training script with CUDA calls
throughout: ``torch.cuda.set_device``, ``model.cuda()``, ``images.cuda(non_blocking=True)``
every step, ``torch.cuda.amp.autocast`` and ``GradScaler``, ``pin_memory``,
``torch.cuda.synchronize`` and CUDA events every step, memory statistics, a checkpoint
saved and loaded with ``map_location='cuda'``. Every line with a CUDA call ends in a
``# cpu: …`` comment that gives its hand port (empty: the line goes). The port is made
by applying exactly those comments, so the two programs do the same work and differ
only where a person porting the script to the CPU would change it (``with autocast():``
becomes ``if True:``, which keeps the block as it is).

* ``cpu-mode``: ``python -m compatfix --device cpu train_cuda.py``
* ``hand-port``: ``python train_cpu.py`` (compatfix active as usual, no device mode)

How it measures
---------------
Each run is a fresh interpreter started with ``os.posix_spawn`` and reaped with
``os.wait4``: its wall time, CPU time (user + sys) and peak RSS (``ru_maxrss``), with no
measuring code inside the child. The script also prints the time of its own training
loop (``time.perf_counter`` around it), which leaves out start-up and imports. The two
variants alternate round by round, in an order reversed every other round, so that
drift hits both alike. Medians are reported with the ratio of the medians, and the
median of the per-round ratios ("paired") with its quartiles as a noise gauge. Both
variants should end with the same final loss (the same numbers, computed the same way);
the script warns when they do not.

The target of the issue: ratios within 5% (<= 1.05).
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import sys
import tempfile
import time

TRAIN_SCRIPT = '''\
import os
import sys
import time

import torch
import torch.backends.cudnn as cudnn
import torch.nn as nn
import torch.nn.functional as F
from torch.cuda.amp import GradScaler, autocast  # cpu:
from torch.utils.data import DataLoader, TensorDataset


class Net(nn.Module):
    def __init__(self, num_classes=10):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 32, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(32)
        self.conv2 = nn.Conv2d(32, 64, 3, padding=1, stride=2)
        self.bn2 = nn.BatchNorm2d(64)
        self.conv3 = nn.Conv2d(64, 64, 3, padding=1, stride=2)
        self.fc = nn.Linear(64, num_classes)

    def forward(self, x):
        x = F.relu(self.bn1(self.conv1(x)))
        x = F.relu(self.bn2(self.conv2(x)))
        x = F.relu(self.conv3(x))
        return self.fc(F.adaptive_avg_pool2d(x, 1).flatten(1))


def main():
    out_dir, steps = sys.argv[1], int(sys.argv[2])
    torch.cuda.set_device(0)  # cpu:
    torch.manual_seed(0)
    torch.cuda.manual_seed_all(0)  # cpu:
    cudnn.benchmark = True
    images = torch.randn(512, 3, 32, 32)
    labels = torch.randint(0, 10, (512,))
    dataset = TensorDataset(images, labels)
    loader = DataLoader(dataset, batch_size=32, shuffle=True, pin_memory=True)  # cpu: loader = DataLoader(dataset, batch_size=32, shuffle=True)
    model = Net().cuda()  # cpu: model = Net()
    criterion = nn.CrossEntropyLoss().cuda()  # cpu: criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, weight_decay=1e-4)
    scaler = GradScaler()  # cpu:
    start_event = torch.cuda.Event(enable_timing=True)  # cpu:
    end_event = torch.cuda.Event(enable_timing=True)  # cpu:

    started = time.perf_counter()
    step, loss_value = 0, float("nan")
    while step < steps:
        for x, y in loader:
            start_event.record()  # cpu:
            x = x.cuda(non_blocking=True)  # cpu:
            y = y.cuda(non_blocking=True)  # cpu:
            with autocast():  # cpu: if True:
                loss = criterion(model(x), y)
            optimizer.zero_grad()
            scaler.scale(loss).backward()  # cpu: loss.backward()
            scaler.step(optimizer)  # cpu: optimizer.step()
            scaler.update()  # cpu:
            end_event.record()  # cpu:
            torch.cuda.synchronize()  # cpu:
            start_event.elapsed_time(end_event)  # cpu:
            torch.cuda.max_memory_allocated()  # cpu:
            loss_value = loss.item()
            step += 1
            if step >= steps:
                break
    loop_seconds = time.perf_counter() - started

    path = os.path.join(out_dir, "checkpoint.pth")
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "step": step}, path)
    state = torch.load(path, map_location="cuda", weights_only=True)  # cpu: state = torch.load(path, weights_only=True)
    model.load_state_dict(state["model"])
    print("LOOP %.6f LOSS %.6f" % (loop_seconds, loss_value))


if __name__ == "__main__":
    main()
'''

_PORT_COMMENT = re.compile(r"^(?P<indent>\s*)(?P<code>.*?)\s*# cpu:(?P<port>.*)$")


def hand_port(source: str) -> str:
    """The CPU port of ``source``: each ``# cpu:`` line replaced by its port, or dropped
    where the port is empty."""
    lines = []
    for line in source.splitlines():
        match = _PORT_COMMENT.match(line)
        if match is None:
            lines.append(line)
        elif match.group("port").strip():
            lines.append(match.group("indent") + match.group("port").strip())
    return "\n".join(lines) + "\n"


def run_once(python: str, args: list[str], env: dict[str, str]) -> dict[str, float]:
    """Spawn ``python args``; its wall and CPU seconds, peak RSS (MiB) and loop time."""
    read_fd, write_fd = os.pipe()
    actions = [(os.POSIX_SPAWN_DUP2, write_fd, 1), (os.POSIX_SPAWN_CLOSE, read_fd),
               (os.POSIX_SPAWN_OPEN, 2, os.devnull, os.O_WRONLY, 0)]
    started = time.perf_counter()
    pid = os.posix_spawn(python, [python, *args], env, file_actions=actions)
    os.close(write_fd)
    with os.fdopen(read_fd, encoding="utf-8") as stream:
        output = stream.read()
    _, status, usage = os.wait4(pid, 0)
    wall = time.perf_counter() - started
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit("run failed: %s\n%s" % (" ".join(args), output))
    match = re.search(r"LOOP ([0-9.]+) LOSS ([-0-9.naif]+)", output)
    if match is None:
        raise SystemExit("no result line from %s:\n%s" % (" ".join(args), output))
    rss_kib = usage.ru_maxrss if sys.platform != "darwin" else usage.ru_maxrss / 1024
    return {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime, "rss": rss_kib / 1024.0,
            "loop": float(match.group(1)), "loss": match.group(2)}


def summarise(results: dict[str, list[dict[str, float]]], base: str, other: str) -> None:
    print("\n%-10s %12s %12s %9s %24s" % ("metric", other, base, "ratio", "paired median [q1, q3]"))
    for key, unit in (("wall", "s"), ("cpu", "s"), ("loop", "s"), ("rss", "MiB")):
        a = [run[key] for run in results[other]]
        b = [run[key] for run in results[base]]
        paired = sorted(x / y for x, y in zip(a, b))
        quartiles = statistics.quantiles(paired, n=4) if len(paired) >= 2 else [paired[0]] * 3
        print("%-10s %10.3f%-2s %10.3f%-2s %9.3f %12.3f [%.3f, %.3f]" % (
            key, statistics.median(a), unit, statistics.median(b), unit,
            statistics.median(a) / statistics.median(b), quartiles[1], quartiles[0], quartiles[2]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--steps", type=int, default=48, help="training steps per run")
    parser.add_argument("--threads", type=int, default=1, help="OMP_NUM_THREADS of the children")
    parser.add_argument("--python", default=sys.executable)
    options = parser.parse_args()

    work = tempfile.mkdtemp(prefix="bench-cpu-mode-")
    cuda_script = os.path.join(work, "train_cuda.py")
    cpu_script = os.path.join(work, "train_cpu.py")
    with open(cuda_script, "w", encoding="utf-8") as handle:
        handle.write(TRAIN_SCRIPT)
    with open(cpu_script, "w", encoding="utf-8") as handle:
        handle.write(hand_port(TRAIN_SCRIPT))
    if "cuda" in hand_port(TRAIN_SCRIPT):
        raise SystemExit("the hand port still calls CUDA:\n" + hand_port(TRAIN_SCRIPT))

    env = {k: v for k, v in os.environ.items() if not k.startswith("COMPATFIX") and k != "PYTHONPATH"}
    env.update(OMP_NUM_THREADS=str(options.threads), MKL_NUM_THREADS=str(options.threads),
               PYTHONWARNINGS="ignore")
    steps = str(options.steps)
    variants = {
        "cpu-mode": ["-m", "compatfix", "--device", "cpu", cuda_script, work, steps],
        "hand-port": [cpu_script, work, steps],
    }
    print("python %s, %d rounds x %d steps, OMP_NUM_THREADS=%d, scripts in %s" % (
        options.python, options.rounds, options.steps, options.threads, work))
    for name, args in variants.items():  # warm-up: byte-code caches, page cache
        run_once(options.python, args, env)
    results: dict[str, list[dict[str, float]]] = {name: [] for name in variants}
    order = list(variants)
    for round_number in range(options.rounds):
        for name in (order if round_number % 2 == 0 else order[::-1]):
            results[name].append(run_once(options.python, variants[name], env))
        print("round %d: %s" % (round_number + 1, "  ".join(
            "%s wall %.2fs loop %.2fs rss %.0fMiB" % (name, runs[-1]["wall"], runs[-1]["loop"], runs[-1]["rss"])
            for name, runs in results.items())))
    losses = {name: {run["loss"] for run in runs} for name, runs in results.items()}
    print("final loss: %s" % losses)
    if losses["cpu-mode"] != losses["hand-port"]:
        print("WARNING: the two variants did not compute the same loss")
    summarise(results, "hand-port", "cpu-mode")
    print("\nratio = cpu-mode / hand-port; the issue's target is <= 1.05")


if __name__ == "__main__":
    main()
