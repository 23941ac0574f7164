"""python load_and_probe.py PATH...: torch.load each PATH as legacy code does, print one
line `RESULT {"path", "ok", "error"}` per file, then `PROBES {...}`: whether any load
changed the classes and functions that the data-only loader can name."""

import argparse
import collections
import json
import pathlib
import sys

import torch

for path in sys.argv[1:]:
    result = {"path": path, "ok": False}
    try:
        loaded = torch.load(path)
    except Exception as exc:
        result["error"] = "%s: %s" % (type(exc).__name__, exc)
    else:
        result["ok"] = True
        result["loaded"] = repr(loaded)[:200]
        if hasattr(loaded, "clone"):
            result["clone_is_method"] = callable(loaded.clone)
    print("RESULT " + json.dumps(result), flush=True)

print("PROBES " + json.dumps({
    "path": str(pathlib.PurePosixPath("/mine/checkpoint.pth")),
    "namespace_poisoned": hasattr(argparse.Namespace, "poisoned"),
    "counter_most_common": callable(collections.Counter.most_common),
    "function_poisoned": hasattr(torch._utils._rebuild_tensor_v2, "poisoned"),
}))
