"""``python -m compatfix.scan PATH...``: the same as ``compatfix scan PATH...``."""

from __future__ import annotations

import sys

from compatfix.scan import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
