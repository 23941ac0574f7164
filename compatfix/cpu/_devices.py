"""The CUDA devices CPU mode plays, and what each reports: one source of truth for every
door a script asks them through (``torch.cuda``, ``nvidia-smi``, pynvml, GPUtil, gpustat).

No shims here, and no torch: the ``nvidia-smi`` answers are made in processes that never
import it. Every device is the same CPU: an idle device whose memory is the machine's RAM,
none of it used (CPU mode's CUDA memory statistics are 0).
"""

from __future__ import annotations

import os

NAME = "CPU (compatfix --device cpu)"
CAPABILITY = (0, 0)  # no CUDA architecture: capability checks take their oldest-GPU branch
DRIVER_VERSION = "N/A"  # no NVIDIA driver is involved; nvidia-smi prints N/A for what it lacks
CUDA_VERSION = "N/A"
MIB = 1024 * 1024


def _env_int(name: str) -> int:
    try:
        return int(os.environ.get(name, ""))
    except ValueError:
        return 0


def _slurm_tasks_per_node() -> int:
    """The most tasks SLURM starts on one node of this step (``SLURM_NTASKS_PER_NODE``, or
    ``SLURM_STEP_TASKS_PER_NODE``/``SLURM_TASKS_PER_NODE`` such as ``2(x3)`` or ``3,2``)."""
    count = _env_int("SLURM_NTASKS_PER_NODE")
    if count <= 0:
        spec = os.environ.get("SLURM_STEP_TASKS_PER_NODE") or os.environ.get("SLURM_TASKS_PER_NODE") or ""
        for part in spec.split(","):
            number = part.partition("(")[0]
            if number.isdigit():
                count = max(count, int(number))
    return count


def visible_device_count() -> int:
    """How many devices ``CUDA_VISIBLE_DEVICES`` lists (0 when unset, empty or starting with
    an invalid entry such as ``-1``): CUDA stops at the first entry that names no device."""
    count = 0
    for entry in os.environ.get("CUDA_VISIBLE_DEVICES", "").split(","):
        entry = entry.strip()
        if entry.isdigit() or entry.startswith(("GPU-", "MIG-")):
            count += 1
        else:
            break
    return count


def local_device_count() -> int:
    """How many CUDA devices CPU mode plays here: the launcher's local world size (torchrun,
    torch.distributed.launch, or SLURM's tasks on this node for srun/submitit), or as many
    as ``CUDA_VISIBLE_DEVICES`` lists if that is more, else 1. Read at each call: scripts
    of the era set ``LOCAL_RANK`` or ``CUDA_VISIBLE_DEVICES`` themselves before they ask."""
    if "SLURM_PROCID" in os.environ or "SLURM_LOCALID" in os.environ:
        slurm = max(_slurm_tasks_per_node(), _env_int("SLURM_LOCALID") + 1)
    else:
        slurm = 0
    return max(1, _env_int("LOCAL_WORLD_SIZE"), _env_int("LOCAL_RANK") + 1, slurm, visible_device_count())


def total_memory() -> int:
    """Bytes of memory each device has: the machine's RAM."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):
        return 0


def used_memory() -> int:
    """Bytes in use on a device: none (CPU mode allocates no CUDA memory)."""
    return 0


def free_memory() -> int:
    return total_memory() - used_memory()


UTILIZATION = 0  # percent busy, for the GPU and for its memory: an idle device
TEMPERATURE = 0  # degrees C, as torch.cuda.temperature() answers in CPU mode
POWER_DRAW_MW = 0  # milliwatts
CLOCK_MHZ = 0


def uuid(index: int) -> str:
    """The device's UUID as ``torch.cuda.get_device_properties(i).uuid`` gives it
    (nvidia-smi and NVML print it with a ``GPU-`` prefix, as for a real device)."""
    return "compatfix-cpu-%d" % index


def pci_bus_id(index: int) -> str:
    """``domain:bus:device.function`` from the PCI numbers the torch properties give."""
    return "00000000:00:%02X.0" % index
