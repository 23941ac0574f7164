"""transformers 4.x's download cache (cached_path, get_from_cache, hf_bucket_url, filename_to_url;
4.22 removed it), against the real transformers 4.57.6 and 5.24: missing with compatfix off; with
it on, a file served by a local HTTP server lands in 4.x's layout (names computed here with
hashlib), is read back from the cache without a second download and offline, follows the Hub's
redirect with its linked ETag, and an archive that would write outside its folder is refused."""

from __future__ import annotations

import pytest

from support import clean_env, run_python

pytestmark = pytest.mark.stack("py312", "transformers4")

PRESENT = """
import transformers, transformers.file_utils as file_utils, transformers.modeling_utils as modeling_utils
print([hasattr(file_utils, n) for n in ("cached_path", "get_from_cache", "hf_bucket_url", "filename_to_url")],
      hasattr(transformers, "cached_path"), hasattr(modeling_utils, "cached_path"))
"""


def test_the_download_cache_is_missing_without_compatfix():
    result = run_python(code=PRESENT, compatfix=False)
    assert result.stdout.strip() == "[False, False, False, False] False False", result.stderr[-2000:]
    result = run_python(code=PRESENT, env=clean_env(COMPATFIX_DISABLE="transformers.file_utils.cached_path"))
    assert result.stdout.strip() == "[False, False, False, False] True True", result.stderr[-2000:]


def test_the_download_cache_keeps_4x_layout(tmp_path):
    result = run_python(
        env=clean_env(no_proxy="127.0.0.1,localhost", NO_PROXY="127.0.0.1,localhost",
                      CACHE_FOLDER=str(tmp_path / "cache")),
        code="""
        import hashlib, io, os, tarfile, threading, zipfile
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
        import transformers
        from transformers import modeling_utils
        from transformers.file_utils import cached_path, filename_to_url, get_from_cache, hf_bucket_url
        assert transformers.cached_path is cached_path is modeling_utils.cached_path

        gets = []
        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass
            def do_HEAD(self):
                if self.path == "/model/resolve/main/weights.bin":  # the Hub: a redirect with the LFS file's ETag
                    self.send_response(302)
                    self.send_header("X-Linked-Etag", '"lfs-1"')
                    self.send_header("Location", "/blobs/weights")
                else:
                    self.send_response(200)
                    self.send_header("ETag", '"v1"')
                self.send_header("Content-Length", "0")
                self.end_headers()
            def do_GET(self):
                gets.append(self.path)
                body = b"weights" if self.path == "/blobs/weights" else b"the vocabulary"
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        base = "http://127.0.0.1:%d" % server.server_port
        cache = os.environ["CACHE_FOLDER"]

        def sha(text):
            return hashlib.sha256(text.encode()).hexdigest()

        url = base + "/vocab.txt"
        path = cached_path(url, cache_dir=cache)
        assert os.path.basename(path) == sha(url) + "." + sha('"v1"'), path
        assert open(path, "rb").read() == b"the vocabulary"
        assert filename_to_url(os.path.basename(path), cache_dir=cache) == (url, '"v1"')
        assert cached_path(url, cache_dir=cache) == path and gets == ["/vocab.txt"]  # from the cache
        hub = base + "/model/resolve/main/weights.bin"
        weights = get_from_cache(hub, cache_dir=cache)
        assert os.path.basename(weights) == sha(hub) + "." + sha('"lfs-1"') and open(weights, "rb").read() == b"weights"
        server.shutdown()
        server.server_close()
        # offline, and with the server gone: what the cache has
        assert cached_path(url, cache_dir=cache, local_files_only=True) == path
        assert cached_path(url, cache_dir=cache) == path
        try:
            cached_path(base + "/never-fetched", cache_dir=cache, local_files_only=True)
        except FileNotFoundError:
            pass
        else:
            raise AssertionError("a file the cache lacks was found offline")
        # a local path is itself; a missing one is an EnvironmentError
        assert cached_path(path) == path
        try:
            cached_path(os.path.join(cache, "missing.txt"))
        except EnvironmentError as error:
            assert "not found" in str(error)
        else:
            raise AssertionError("a missing file was accepted")
        assert hf_bucket_url("bert-base-uncased", "config.json") == \\
            "https://huggingface.co/bert-base-uncased/resolve/main/config.json"
        assert hf_bucket_url("org/model", "vocab.txt", subfolder="tok", revision="v2") == \\
            "https://huggingface.co/org/model/resolve/v2/tok/vocab.txt"
        # archives: extracted into their own folder; one with a member outside it is refused
        good = os.path.join(cache, "good.zip")
        with zipfile.ZipFile(good, "w") as archive:
            archive.writestr("data/a.txt", "a")
        folder = cached_path(good, extract_compressed_file=True)
        assert open(os.path.join(folder, "data", "a.txt")).read() == "a"
        evil = os.path.join(cache, "evil.tar")
        with tarfile.open(evil, "w") as archive:
            info = tarfile.TarInfo("../../escaped.txt")
            info.size = 1
            archive.addfile(info, io.BytesIO(b"x"))
        try:
            cached_path(evil, extract_compressed_file=True)
        except tarfile.TarError:
            pass
        else:
            raise AssertionError("a member outside the folder was extracted")
        assert not os.path.exists(os.path.join(os.path.dirname(cache), "escaped.txt"))
        print("ok")
        """,
    )
    assert result.stdout.split() == ["ok"], result.stderr[-3000:]
