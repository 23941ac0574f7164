"""CPU mode (``--device cpu`` / ``COMPATFIX_DEVICE=cpu``): run CUDA code on the CPU.

The modules here declare device shims (``Shim(..., device="cpu")``) and are imported
only when the mode is on (``compatfix.registry.DEVICE_PACKAGES``; the generated index lists them), so that a
run without it never loads or pays for them. This package must stay free of imports
of torch or of its own submodules.
"""
