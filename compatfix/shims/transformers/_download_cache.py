"""transformers 4.x's own download cache (``cached_path``, ``get_from_cache``,
``hf_bucket_url``, ``filename_to_url``), which 4.22 replaced with huggingface_hub's. 2020-22
code calls it to fetch vocabularies and weights by URL, or to turn a model name into a URL.

The layout is 4.x's, so a cache folder that 4.x filled is read as it was: a file is stored as
``sha256(url).sha256(etag)`` with its ``.json`` record ``{"url": ..., "etag": ...}`` beside it.
The ETag comes from a HEAD request that does not follow redirects (the Hub answers
``X-Linked-Etag`` there and points at the file with ``Location``), as 4.x did. Downloads go
through the standard library; the files are written to a temporary name and moved into place
(``resume_download`` is accepted and a broken download starts again).

Extraction (``extract_compressed_file=True``) refuses archive members that would land outside
the extraction folder, or links: 4.x extracted whatever the archive held.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tarfile
import tempfile
import urllib.error
import urllib.parse
import urllib.request
import zipfile
from pathlib import Path
from typing import Any

HUGGINGFACE_CO_RESOLVE_ENDPOINT = "https://huggingface.co"


def default_cache_dir() -> str:
    """4.x's TRANSFORMERS_CACHE: the first of its three variables that is set, else
    ``$HF_HOME/transformers`` (``~/.cache/huggingface/transformers``)."""
    for variable in ("TRANSFORMERS_CACHE", "PYTORCH_TRANSFORMERS_CACHE", "PYTORCH_PRETRAINED_BERT_CACHE"):
        if os.environ.get(variable):
            return os.environ[variable]
    home = os.path.expanduser(os.getenv("HF_HOME", os.path.join(os.getenv("XDG_CACHE_HOME", "~/.cache"),
                                                                "huggingface")))
    return os.path.join(home, "transformers")


def is_offline_mode() -> bool:
    return any(os.environ.get(variable, "").upper() in {"1", "ON", "YES", "TRUE"}
               for variable in ("TRANSFORMERS_OFFLINE", "HF_HUB_OFFLINE"))


def is_remote_url(url_or_filename: str) -> bool:
    return urllib.parse.urlparse(url_or_filename).scheme in ("http", "https")


def hf_bucket_url(model_id: str, filename: str, subfolder: str | None = None, revision: str | None = None,
                  mirror: str | None = None) -> str:
    """transformers 4.x: the Hub URL of ``filename`` in the repository ``model_id``."""
    if subfolder is not None:
        filename = f"{subfolder}/{filename}"
    if mirror:
        # 4.x's mirrors of China's universities, or a mirror's own URL
        prefixes = {"tuna": "https://mirrors.tuna.tsinghua.edu.cn/hugging-face-models",
                    "bfsu": "https://mirrors.bfsu.edu.cn/hugging-face-models"}
        prefix = prefixes.get(mirror, mirror)
        legacy_format = "/" not in model_id
        return f"{prefix}/{model_id}-{filename}" if legacy_format else f"{prefix}/{model_id}/{filename}"
    endpoint = os.environ.get("HUGGINGFACE_CO_RESOLVE_ENDPOINT", HUGGINGFACE_CO_RESOLVE_ENDPOINT)
    return f"{endpoint}/{model_id}/resolve/{revision or 'main'}/{filename}"


def url_to_filename(url: str, etag: str | None = None) -> str:
    filename = hashlib.sha256(url.encode("utf-8")).hexdigest()
    if etag:
        filename += "." + hashlib.sha256(etag.encode("utf-8")).hexdigest()
    if url.endswith(".h5"):
        filename += ".h5"
    return filename


def filename_to_url(filename: str, cache_dir: str | os.PathLike | None = None) -> tuple[str, str | None]:
    """transformers 4.x: the URL and ETag a cached file came from; EnvironmentError if it is
    not in the cache."""
    cache_path = os.path.join(str(cache_dir or default_cache_dir()), filename)
    if not os.path.exists(cache_path) or not os.path.exists(cache_path + ".json"):
        raise EnvironmentError(f"file {cache_path} not found")
    with open(cache_path + ".json", encoding="utf-8") as meta_file:
        metadata = json.load(meta_file)
    return metadata["url"], metadata["etag"]


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, req, fp, code, msg, headers, newurl):  # type: ignore[no-untyped-def]
        return None  # the 3xx response itself is what the HEAD request wants


def _headers(user_agent: Any, use_auth_token: Any) -> dict[str, str]:
    agent = "transformers/4 (compatfix)"
    if isinstance(user_agent, dict):
        agent += "; " + "; ".join(f"{k}/{v}" for k, v in user_agent.items())
    elif isinstance(user_agent, str):
        agent += "; " + user_agent
    headers = {"user-agent": agent}
    token = use_auth_token
    if token is True:
        from huggingface_hub import get_token

        token = get_token()
        if token is None:
            raise EnvironmentError("You specified use_auth_token=True, but a huggingface token was not found.")
    if isinstance(token, str):
        headers["authorization"] = f"Bearer {token}"
    return headers


def _opener(proxies: dict[str, str] | None, follow_redirects: bool) -> urllib.request.OpenerDirector:
    handlers: list[Any] = [urllib.request.ProxyHandler(proxies)] if proxies else []
    if not follow_redirects:
        handlers.append(_NoRedirect())
    return urllib.request.build_opener(*handlers)


def get_from_cache(url: str, cache_dir: str | os.PathLike | None = None, force_download: bool = False,
                   proxies: dict[str, str] | None = None, etag_timeout: float = 10, resume_download: bool = False,
                   user_agent: Any = None, use_auth_token: Any = None, local_files_only: bool = False) -> str:
    """transformers 4.x: the local path of ``url``'s file in the cache, downloaded unless the
    cache has the version the server's ETag names (or, offline, any version of it)."""
    cache_dir = str(cache_dir or default_cache_dir())
    os.makedirs(cache_dir, exist_ok=True)
    headers = _headers(user_agent, use_auth_token)
    url_to_download, etag = url, None
    if not local_files_only:
        answer = None
        try:
            request = urllib.request.Request(url, headers=headers, method="HEAD")
            with _opener(proxies, follow_redirects=False).open(request, timeout=etag_timeout) as response:
                answer = response.headers
        except urllib.error.HTTPError as error:  # a 3xx arrives as one, since redirects are not followed
            if not 300 <= error.code <= 399:
                raise
            answer = error.headers
            url_to_download = urllib.parse.urljoin(url, error.headers["Location"])
        except (urllib.error.URLError, TimeoutError):
            pass  # the server cannot be reached: what the cache has will do, as in 4.x
        if answer is not None:
            # the Hub's header for the linked (LFS) file first, then the response's own
            etag = answer.get("X-Linked-Etag") or answer.get("ETag")
            if etag is None:
                raise OSError("Distant resource does not have an ETag, we won't be able to reliably ensure "
                              "reproducibility.")
    filename = url_to_filename(url, etag)
    cache_path = os.path.join(cache_dir, filename)
    if etag is None:
        if os.path.exists(cache_path):
            return cache_path
        # any version of the URL's file (4.x's filename.* match), not records or unfinished downloads
        prefix = filename.split(".")[0] + "."
        matching = sorted(name for name in os.listdir(cache_dir)
                          if name.startswith(prefix) and not name.endswith((".json", ".lock", ".incomplete")))
        if matching:
            return os.path.join(cache_dir, matching[-1])
        if local_files_only:
            raise FileNotFoundError("Cannot find the requested files in the cached path and outgoing traffic has "
                                    "been disabled. To enable model look-ups and downloads online, set "
                                    "'local_files_only' to False.")
        raise ValueError("Connection error, and we cannot find the requested files in the cached path. "
                         "Please try again or make sure your Internet connection is on.")
    if os.path.exists(cache_path) and not force_download:
        return cache_path
    request = urllib.request.Request(url_to_download, headers=headers)
    handle, temp_name = tempfile.mkstemp(dir=cache_dir, prefix=filename + ".", suffix=".incomplete")
    try:
        with os.fdopen(handle, "wb") as temp_file, \
                _opener(proxies, follow_redirects=True).open(request, timeout=etag_timeout) as response:
            shutil.copyfileobj(response, temp_file)
        os.replace(temp_name, cache_path)
    except BaseException:
        if os.path.exists(temp_name):
            os.unlink(temp_name)
        raise
    with open(cache_path + ".json", "w", encoding="utf-8") as meta_file:
        json.dump({"url": url, "etag": etag}, meta_file)
    return cache_path


def cached_path(url_or_filename: str | os.PathLike, cache_dir: str | os.PathLike | None = None,
                force_download: bool = False, proxies: dict[str, str] | None = None, resume_download: bool = False,
                user_agent: Any = None, extract_compressed_file: bool = False, force_extract: bool = False,
                use_auth_token: Any = None, local_files_only: bool = False) -> str:
    """transformers 4.x: a URL's file through the download cache, or a local path as it is
    (EnvironmentError if it does not exist); with ``extract_compressed_file``, the folder a
    zip or tar archive was extracted into."""
    url_or_filename = str(url_or_filename)
    if is_offline_mode() and not local_files_only:
        local_files_only = True
    if is_remote_url(url_or_filename):
        output_path = get_from_cache(url_or_filename, cache_dir=cache_dir, force_download=force_download,
                                     proxies=proxies, resume_download=resume_download, user_agent=user_agent,
                                     use_auth_token=use_auth_token, local_files_only=local_files_only)
    elif os.path.exists(url_or_filename):
        output_path = url_or_filename
    elif urllib.parse.urlparse(url_or_filename).scheme == "":
        raise EnvironmentError(f"file {url_or_filename} not found")
    else:
        raise ValueError(f"unable to parse {url_or_filename} as a URL or as a local path")
    if not extract_compressed_file or not (zipfile.is_zipfile(output_path) or tarfile.is_tarfile(output_path)):
        return output_path
    directory, name = os.path.split(output_path)
    extracted = os.path.join(directory, name.replace(".", "-") + "-extracted")
    if os.path.isdir(extracted) and os.listdir(extracted) and not force_extract:
        return extracted
    shutil.rmtree(extracted, ignore_errors=True)
    os.makedirs(extracted)
    _extract(output_path, extracted)
    return extracted


def _extract(archive: str, target: str) -> None:
    root = Path(target).resolve()

    def inside(member: str) -> bool:
        return root in (root / member).resolve().parents or (root / member).resolve() == root

    if zipfile.is_zipfile(archive):
        with zipfile.ZipFile(archive) as zip_file:
            bad = [name for name in zip_file.namelist() if not inside(name)]
            if bad:
                raise ValueError(f"archive {archive} has members outside its folder: {bad[:3]}")
            zip_file.extractall(target)
        return
    with tarfile.open(archive) as tar_file:
        # the "data" filter refuses absolute paths, "..", links out of the folder and devices
        tar_file.extractall(target, filter="data")
