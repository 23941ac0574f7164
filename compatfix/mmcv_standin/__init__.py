"""Stand-ins for parts of mmcv that cannot be installed on today's stack (the compiled ops)."""
