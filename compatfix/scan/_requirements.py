"""The requirements a repository declares: requirements*.txt, setup.py's install_requires
(read with ``ast``, never run), setup.cfg, pyproject.toml and conda environment files, and
the Python releases it supports (``python_requires``, ``requires-python``, Poetry's and
conda's ``python``), as a requirement named ``python``.

Only what ``compatfix scan`` needs is parsed: a distribution name and its version clauses,
with the line they are on. Markers, extras, URLs and options are dropped.
"""

from __future__ import annotations

import ast
import configparser
import os
import re
from dataclasses import dataclass
from typing import Iterator

_NAME = re.compile(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(\[[^\]]*\])?\s*(.*)")
_CONDA = re.compile(r"\s*(?:[A-Za-z0-9_.-]+::)?([A-Za-z0-9][A-Za-z0-9._-]*)\s*(.*)")


@dataclass(frozen=True)
class Requirement:
    file: str
    line: int
    name: str  # the distribution's name, as written
    spec: str  # comma-separated clauses in compatfix._versions' syntax ("" for none)
    text: str  # the requirement as written


def normalise(name: str) -> str:
    """PEP 503's normalised project name."""
    return re.sub(r"[-_.]+", "-", name).lower()


def _clauses(spec: str) -> str:
    """Version clauses in ``_versions.in_range``'s syntax: ``~=1.4.2`` -> ``>=1.4.2,==1.4.*``;
    a bare conda version ``=1.7`` or ``1.7`` -> ``==1.7.*``."""
    out = []
    for clause in spec.split(","):
        clause = clause.strip().replace(" ", "")
        if not clause:
            continue
        if clause.startswith("~="):
            bound = clause[2:]
            parts = bound.split(".")
            out += [">=" + bound, "==" + ".".join(parts[:-1] or parts) + ".*"]
        elif clause.startswith("==="):
            out.append("==" + clause[3:])
        elif clause.startswith(("<", ">", "!", "==")):
            out.append(clause)
        elif clause.startswith("=") or clause[0].isdigit():  # conda: =1.7, 1.7, 1.7.*
            bound = clause.lstrip("=").split("=")[0]  # drop a conda build string
            out.append("==" + bound if bound.endswith(".*") else "==%s.*" % bound)
    return ",".join(out)


def parse_line(text: str, conda: bool = False) -> tuple[str, str] | None:
    """``'numpy<1.24 ; python_version < "3.8"'`` -> ``('numpy', '<1.24')``; None for
    options, URLs, paths and blank lines."""
    text = text.split(" #", 1)[0].split(";", 1)[0].strip()
    if not text or text.startswith(("-", "#", ".", "/")) or "://" in text or "@" in text:
        return None
    match = (_CONDA if conda else _NAME).match(text)
    if match is None:
        return None
    return match.group(1), _clauses(match.group(2) if conda else match.group(3))


def _text_file(path: str, conda: bool = False) -> Iterator[tuple[int, str, str, str]]:
    with open(path, encoding="utf-8", errors="replace") as handle:
        for number, line in enumerate(handle, 1):
            parsed = parse_line(line, conda)
            if parsed:
                yield number, parsed[0], parsed[1], line.strip()


def _setup_py(path: str) -> Iterator[tuple[int, str, str, str]]:
    """The string constants of setup()'s install_requires/extras_require/setup_requires."""
    with open(path, encoding="utf-8", errors="replace") as handle:
        try:
            tree = ast.parse(handle.read(), filename=path)
        except (SyntaxError, ValueError):
            return
    for node in ast.walk(tree):
        if isinstance(node, ast.keyword) and node.arg == "python_requires" and \
                isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            yield node.value.lineno, "python", _clauses(node.value.value), "python_requires=%r" % node.value.value
            continue
        if not isinstance(node, ast.keyword) or node.arg not in (
                "install_requires", "extras_require", "setup_requires", "tests_require"):
            continue
        for item in ast.walk(node.value):
            if isinstance(item, ast.Constant) and isinstance(item.value, str):
                for line in item.value.splitlines():
                    parsed = parse_line(line)
                    if parsed:
                        yield item.lineno, parsed[0], parsed[1], line.strip()


def _setup_cfg(path: str) -> Iterator[tuple[int, str, str, str]]:
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read(path, encoding="utf-8")
    except configparser.Error:
        return
    wanted: list[str] = []
    if parser.has_option("options", "python_requires"):
        wanted.append("python" + parser.get("options", "python_requires").strip())
    if parser.has_option("options", "install_requires"):
        wanted += parser.get("options", "install_requires").splitlines()
    if parser.has_section("options.extras_require"):
        for _, value in parser.items("options.extras_require"):
            wanted += value.splitlines()
    yield from _lines_of(path, wanted)


def _lines_of(path: str, wanted: list[str]) -> Iterator[tuple[int, str, str, str]]:
    """Each requirement of ``wanted`` with the line of the file it is first written on (a
    Python range, ``python>=3.6``, on the line that has its version clauses)."""
    with open(path, encoding="utf-8", errors="replace") as handle:
        lines = handle.read().splitlines()
    for requirement in wanted:
        parsed = parse_line(requirement)
        if not parsed:
            continue
        written = requirement.strip()
        if parsed[0] == "python":
            written = written[len("python"):].strip()
        number = next((i for i, line in enumerate(lines, 1) if written in line), 1)
        yield number, parsed[0], parsed[1], requirement.strip()


def _pyproject(path: str) -> Iterator[tuple[int, str, str, str]]:
    try:
        import tomllib
    except ImportError:  # Python < 3.11: tomli where installed, else the file is passed over
        try:
            import tomli as tomllib  # type: ignore[no-redef]
        except ImportError:
            return
    with open(path, "rb") as handle:
        try:
            data = tomllib.load(handle)
        except ValueError:
            return
    project = data.get("project", {})
    wanted = list(project.get("dependencies", []))
    if isinstance(project.get("requires-python"), str):
        wanted.append("python" + project["requires-python"])
    for extra in project.get("optional-dependencies", {}).values():
        wanted += extra
    poetry = data.get("tool", {}).get("poetry", {}).get("dependencies", {})
    for name, spec in poetry.items():
        if isinstance(spec, dict):
            spec = spec.get("version", "")
        if isinstance(spec, str):
            wanted.append(name + ("" if spec in ("", "*") else spec.replace("^", ">=")))
    yield from _lines_of(path, [w for w in wanted if isinstance(w, str)])


def _environment_yml(path: str) -> Iterator[tuple[int, str, str, str]]:
    """A conda environment file's dependencies (conda's ``name=version`` and the pip list),
    read line by line: it is YAML, but only its two lists matter here."""
    with open(path, encoding="utf-8", errors="replace") as handle:
        lines = handle.read().splitlines()
    in_dependencies = False
    pip_indent: int | None = None
    for number, line in enumerate(lines, 1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        indent = len(line) - len(line.lstrip())
        if indent == 0:
            in_dependencies = stripped.startswith("dependencies:")
            pip_indent = None
            continue
        if not in_dependencies or not stripped.startswith("- "):
            continue
        item = stripped[2:].strip().strip("'\"")
        if item.startswith("pip:"):
            pip_indent = indent
            continue
        if pip_indent is not None and indent <= pip_indent:
            pip_indent = None
        parsed = parse_line(item, conda=pip_indent is None)
        if parsed:
            yield number, parsed[0], parsed[1], item


def requirement_readers(filename: str):
    """The reader for a file name, or None: a file that declares requirements."""
    lower = filename.lower()
    if lower.startswith("requirements") and lower.endswith((".txt", ".in")):
        return _text_file
    if lower == "setup.py":
        return _setup_py
    if lower == "setup.cfg":
        return _setup_cfg
    if lower == "pyproject.toml":
        return _pyproject
    if lower in ("environment.yml", "environment.yaml", "conda.yml", "conda.yaml") or (
            lower.startswith("environment") and lower.endswith((".yml", ".yaml"))):
        return _environment_yml
    return None


def read_requirements(path: str, shown: str, in_requirements_folder: bool = False) -> list[Requirement]:
    """The requirements ``path`` declares (``shown``: its path in the findings); a .txt in a
    folder named requirements counts as a requirements file."""
    name = os.path.basename(path)
    reader = requirement_readers(name)
    if reader is None and in_requirements_folder and name.lower().endswith(".txt"):
        reader = _text_file
    if reader is None:
        return []
    try:
        return [Requirement(shown, line, dist, spec, text) for line, dist, spec, text in reader(path)]
    except OSError:
        return []
