"""``compatfix trust``: what the trust store holds, and forgetting entries.

    compatfix trust [list] [--json]      every trusted checkpoint: sha256, size, when, where saved
    compatfix trust forget FILE|SHA256…  stop trusting those bytes (a file is hashed; a path
                                         recorded in the store also matches)
    compatfix trust forget --all         empty the store

Exit codes: 0 done, 1 ``forget`` matched nothing, 2 usage error or an unusable store.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

from compatfix.checkpoint import trust_store


def _digest_of(target: str) -> str | None:
    if len(target) == 64 and all(character in "0123456789abcdef" for character in target.lower()):
        return target.lower()
    try:
        fd = trust_store.open_regular(target)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as handle:
        import hashlib

        digest = hashlib.sha256()
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="compatfix trust", description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command")
    listing = commands.add_parser("list", help="every trusted checkpoint (the default)")
    listing.add_argument("--json", action="store_true")
    forget = commands.add_parser("forget", help="stop trusting files or sha256s")
    forget.add_argument("targets", nargs="*", metavar="FILE|SHA256")
    forget.add_argument("--all", action="store_true", help="forget every entry")
    parser.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    options = parser.parse_args(argv)
    store = trust_store.store_path()
    if store is None:
        print("compatfix: the trust store is off (%s=off)" % trust_store.ENV_TRUST_STORE)
        return 0
    try:
        trust_store.check_safe(store)
    except trust_store.UnsafeStore as exc:
        print(str(exc), file=sys.stderr)
        return 2
    if options.command == "forget":
        if not options.targets and not options.all:
            parser.error("forget needs FILE, SHA256 or --all")
        digests = {digest for digest in map(_digest_of, options.targets) if digest}
        paths = {os.path.abspath(target) for target in options.targets}
        removed = trust_store.forget(lambda entry: options.all or entry[0] in digests or entry[3] in paths, store)
        print("compatfix: forgot %d entr%s of %s" % (removed, "y" if removed == 1 else "ies", store))
        return 0 if removed or options.all else 1
    entries = list(trust_store.entries(store))
    if options.json:
        print(json.dumps({"store": store, "entries": [
            {"sha256": digest, "size": size, "saved": saved, "path": path} for digest, size, saved, path in entries
        ]}, indent=2))
        return 0
    print("trust store: %s (%d entr%s)" % (store, len(entries), "y" if len(entries) == 1 else "ies"))
    for digest, size, saved, path in entries:
        print("%s  %12d  %s  %s" % (digest[:16], size, saved, path))
    return 0
