"""The pkg_resources stand-in, on an interpreter where pkg_resources really is gone: the
Python 3.12 venv ``.venvs/py312`` has no setuptools (see the module's note on building
it). Red: ``import pkg_resources`` fails with compatfix off. Green: the calls 2020-22 code
made work with it on, checked against the installed distributions' own metadata. On the
modern stack (setuptools 81 still has pkg_resources) the real one must win."""

from __future__ import annotations

import pytest

from support import run_python

# The stand-in's tests run where pkg_resources is really gone; the real one's on modern.
gone = pytest.mark.stack("py312")


@gone
def test_pkg_resources_is_gone_without_compatfix():
    result = run_python(code="import pkg_resources", compatfix=False)
    assert result.returncode != 0 and "No module named 'pkg_resources'" in result.stderr


@gone
def test_stand_in_answers_what_old_code_asked():
    result = run_python(
        code="""
        import importlib.metadata as metadata, os, pytest
        import pkg_resources
        from pkg_resources import DistributionNotFound, VersionConflict, get_distribution, parse_version
        dist = get_distribution("pytest")
        assert dist.version == metadata.version("pytest") and dist.project_name == "pytest"
        assert dist.parsed_version >= parse_version("7") and parse_version("1.10") > parse_version("1.9")
        assert os.path.isdir(os.path.join(dist.location, "pytest"))
        needed = {d.project_name for d in pkg_resources.require("pytest>=7")}
        # pytest's own dependencies, from its metadata (markers that hold here only).
        assert {"pytest", "pluggy", "iniconfig", "packaging"} <= needed
        for bad, error in (("pytest<1", VersionConflict), ("no-such-distribution-x", DistributionNotFound)):
            try:
                get_distribution(bad)
            except error:
                pass
            else:
                raise AssertionError(bad)
        scripts = {ep.name: ep for ep in pkg_resources.iter_entry_points("console_scripts")}
        declared = metadata.distribution("pytest").entry_points.select(group="console_scripts", name="pytest")
        module, _, attr = next(iter(declared)).value.partition(":")
        assert scripts["pytest"].module_name == module and scripts["pytest"].attrs == (attr,)
        assert scripts["pytest"].load() is getattr(__import__(module, fromlist=[attr]), attr)
        assert [ep.name for ep in pkg_resources.iter_entry_points("console_scripts", "pytest")] == ["pytest"]
        path = pkg_resources.resource_filename("pytest", "__init__.py")
        assert os.path.samefile(path, pytest.__file__)
        assert "pytest" in pkg_resources.working_set.by_key
        assert {d.key for d in pkg_resources.working_set} >= {"pytest", "packaging", "pluggy"}
        print("ok")
        """
    )
    assert result.stdout.split() == ["ok"], result.stderr


@pytest.mark.stack("modern")
def test_a_real_pkg_resources_wins():
    result = run_python(code="import pkg_resources, os; print(os.path.basename(os.path.dirname(pkg_resources.__file__)))")
    assert result.stdout.split()[-1:] == ["pkg_resources"], result.stderr
