"""``python -m compatfix [options] script.py args…`` / ``-m module args…``."""

import sys

from compatfix._runner import main

if __name__ == "__main__":
    sys.exit(main())
