"""``apex.multi_tensor_apply`` without apex's ``amp_C`` extension (its fused multi-tensor
CUDA kernels, which no Python stand-in can be). Code asks ``multi_tensor_applier.available``
before it uses them, and takes its plain-torch path when it is False, as with an apex
built without ``--cuda_ext``; a call raises apex's own RuntimeError for that case."""

from __future__ import annotations

from typing import Any

__all__ = ["MultiTensorApply", "multi_tensor_applier"]


class MultiTensorApply:
    available = False
    warned = False
    import_err = ImportError("No module named 'amp_C': compatfix's apex stand-in has no fused CUDA kernels")

    def __init__(self, chunk_size: int) -> None:
        self.chunk_size = chunk_size

    def check_avail(self) -> None:
        if not MultiTensorApply.available:
            raise RuntimeError(
                "Attempted to call MultiTensorApply method, but MultiTensorApply is not available, possibly "
                "because Apex was installed without --cpp_ext --cuda_ext.  Original import error message:",
                MultiTensorApply.import_err)

    def __call__(self, op: Any, noop_flag_buffer: Any, tensor_lists: Any, *args: Any) -> Any:
        self.check_avail()
        return op(self.chunk_size, noop_flag_buffer, tensor_lists, *args)


# apex's chunk size, 2048 * 32 elements
multi_tensor_applier = MultiTensorApply(2048 * 32)
