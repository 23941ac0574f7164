"""Helpers the CPU-mode shim modules share (no shims here): what counts as a CUDA
device, the per-shim redirect counter, and dressing a wrapper as the function it replaces."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable

CPU = "cpu"


def counter(shim: str) -> Callable[[str], None]:
    """``count(what)``: one redirected call of kind ``what``, counted for ``shim`` in the
    ``--report`` JSON (nothing when no engine is active)."""
    from compatfix import _engine

    def count(what: str) -> None:
        engine = _engine.active()
        if engine is not None:
            engine.recorder.record_redirect(shim, what)

    return count


def make_is_cuda(torch: Any) -> Callable[[Any], bool]:
    """``is_cuda(device)``: a ``str`` starting with ``"cuda"``, a ``torch.device`` of type
    ``cuda`` or a bare ``int`` index (which names a CUDA device)."""
    device_class = torch.device

    def is_cuda(device: Any) -> bool:
        cls = device.__class__
        if cls is str:
            return device.startswith("cuda")
        if cls is device_class:
            return device.type == "cuda"
        return cls is int

    return is_cuda


def dress(wrapper: Any, original: Any, qualname: str) -> Any:
    """Give ``wrapper`` the name, docstring and ``__wrapped__`` of ``original``."""
    wrapper.__name__ = qualname.rpartition(".")[2]
    wrapper.__qualname__ = qualname
    wrapper.__doc__ = getattr(original, "__doc__", None)
    wrapper.__wrapped__ = original
    return wrapper
