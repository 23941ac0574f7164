"""scripts/share-torch.py: a new stack venv hard-links the pinned torch and its dependency
closure from a sibling venv, and nothing else.

The donor is a folder laid out like a venv with small fake distributions (METADATA, WHEEL,
RECORD, one module file each); the receiver is a real venv made without pip, so the script
runs under the receiver's interpreter as setup-stacks.sh runs it. pip's vendored packaging,
which the script imports, comes from this venv's pip, found by path: importing pip here would
make setuptools' distutils hack hand the stdlib's distutils to every later `import
setuptools` in this worker (torch's cpp_extension, which mmcv imports, then fails)."""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

import pytest

from support import clean_env

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "share-torch.py"
PY_TAG = "python%d.%d" % sys.version_info[:2]


def add_distribution(site: Path, name: str, version: str, requires=(), tag="cp311-cp311-linux_x86_64",
                     script: str | None = None) -> None:
    """A fake installed distribution: <name>/__init__.py, and a console script if asked."""
    module = site / name.replace("-", "_")
    module.mkdir(parents=True)
    (module / "__init__.py").write_text("VERSION = %r\n" % version)
    info = site / ("%s-%s.dist-info" % (name.replace("-", "_"), version))
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: %s\nVersion: %s\n%s\n" % (
        name, version, "".join("Requires-Dist: %s\n" % spec for spec in requires)))
    (info / "WHEEL").write_text("Wheel-Version: 1.0\nTag: %s\n" % tag)
    rows = ["%s/__init__.py,," % module.name, "%s/METADATA,," % info.name, "%s/WHEEL,," % info.name,
            "%s/RECORD,," % info.name]
    if script is not None:
        bin_dir = site.parents[2] / "bin"
        bin_dir.mkdir(exist_ok=True)
        (bin_dir / script).write_text("#!/donor/bin/python\nimport %s\n" % module.name)
        (bin_dir / script).chmod(0o755)
        rows.append("../../../bin/%s,," % script)
    (info / "RECORD").write_text("\n".join(rows) + "\n")


def make_donor(venvs: Path, torch_version="2.14.1", python_folder=PY_TAG, nvidia_tag="py3-none-manylinux_x86_64"):
    site = venvs / "donor" / "lib" / python_folder / "site-packages"
    site.mkdir(parents=True)
    add_distribution(site, "torch", torch_version, script="torchrun", requires=[
        "nvidia-cublas==1.0",
        "filelock",
        "numpy",  # the stack's requirements name numpy: pip resolves it, not the donor
        'opt-einsum ; extra == "opt-einsum"',  # an extra nobody asked for
        'typing-extensions ; python_version < "3.0"',  # a marker false on every Python here
    ])
    add_distribution(site, "torchvision", "0.29.1", requires=["torch==%s" % torch_version, "pillow"])
    add_distribution(site, "nvidia-cublas", "1.0", tag=nvidia_tag)
    for name in ("filelock", "numpy", "opt-einsum", "typing-extensions", "pillow"):
        add_distribution(site, name, "1.0")
    return site


@pytest.fixture
def receiver(tmp_path):
    """A venv under tmp/venvs without pip, and the means to run share-torch.py with its python."""
    venvs = tmp_path / "venvs"
    venvs.mkdir()
    venv.EnvBuilder(with_pip=False, symlinks=True).create(venvs / "receiver")
    python = venvs / "receiver" / "bin" / "python"
    site = venvs / "receiver" / "lib" / PY_TAG / "site-packages"
    pip_home = tmp_path / "pip-home"  # only pip on the path, not this venv's other packages
    pip_home.mkdir()
    (pip_home / "pip").symlink_to(Path(sysconfig.get_paths()["purelib"]) / "pip")
    requirements = tmp_path / "stack.txt"
    requirements.write_text("torch==2.14.1  # the stack's pin\ntorchvision==0.29.1\nnumpy>=1.20\n")

    def share():
        completed = subprocess.run([str(python), str(SCRIPT), str(venvs), str(requirements)],
                                   capture_output=True, text=True, timeout=120,
                                   env=clean_env(compatfix=False, PYTHONPATH=str(pip_home)))
        assert completed.returncode == 0, completed.stderr
        return completed.stderr

    return venvs, site, python, share


def shared_names(site: Path) -> set[str]:
    return {info.name.split("-")[0] for info in site.glob("*.dist-info")}


def test_the_pinned_torch_and_its_closure_are_hard_links_of_the_donor_s_files(receiver):
    venvs, site, python, share = receiver
    donor = make_donor(venvs)
    said = share()
    assert "hard-linked 5 distributions" in said, said
    assert shared_names(site) == {"torch", "torchvision", "nvidia_cublas", "filelock", "pillow"}
    for rel in ("torch/__init__.py", "torch-2.14.1.dist-info/RECORD", "nvidia_cublas/__init__.py"):
        assert os.path.samefile(site / rel, donor / rel), rel
    # the console script is a copy whose #! names the receiver's python, not the donor's
    script = venvs / "receiver" / "bin" / "torchrun"
    assert not os.path.samefile(script, venvs / "donor" / "bin" / "torchrun")
    assert script.read_text().splitlines()[0] == "#!" + str(python)
    assert os.access(script, os.X_OK)
    imported = subprocess.run([str(python), "-c", "import torch, torchvision; print(torch.VERSION)"],
                              capture_output=True, text=True, env=clean_env(compatfix=False))
    assert imported.stdout.strip() == "2.14.1", imported.stderr


def test_a_second_run_shares_nothing_more(receiver):
    venvs, site, _, share = receiver
    make_donor(venvs)
    share()
    before = sorted(p.name for p in site.iterdir())
    assert share() == ""
    assert sorted(p.name for p in site.iterdir()) == before


def test_a_donor_with_another_torch_is_not_used(receiver):
    venvs, site, _, share = receiver
    make_donor(venvs, torch_version="2.14.0")
    assert share() == ""
    assert shared_names(site) == set()


def test_another_python_s_donor_shares_only_pure_wheels(receiver):
    venvs, site, _, share = receiver
    make_donor(venvs, python_folder="python3.99")
    said = share()
    assert "hard-linked 1 distributions" in said, said
    assert shared_names(site) == {"nvidia_cublas"}


def test_another_python_s_donor_with_no_pure_wheel_shares_nothing(receiver):
    venvs, site, _, share = receiver
    make_donor(venvs, python_folder="python3.99", nvidia_tag="cp399-cp399-linux_x86_64")
    assert share() == ""
    assert shared_names(site) == set()
