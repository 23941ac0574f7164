"""``python -m compatfix.inventory --markdown``: print docs/removed-apis.md."""

from __future__ import annotations

import sys

from compatfix.inventory import markdown


def main(argv: list[str]) -> int:
    if argv != ["--markdown"]:
        print("usage: python -m compatfix.inventory --markdown", file=sys.stderr)
        return 2
    sys.stdout.write(markdown())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
