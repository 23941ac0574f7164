"""The removed-API inventory: docs/removed-apis.md is generated from it, and every shim it
names exists in the registry."""

from __future__ import annotations

import os

from compatfix import inventory, registry
from support import REPO_ROOT, run_python

DOCS = os.path.join(REPO_ROOT, "docs")
CORPUS_HEADING = "## Use-weighted coverage (corpus scan)"


def test_docs_removed_apis_is_generated_from_the_inventory():
    result = run_python("-m", "compatfix.inventory", "--markdown", compatfix=False)
    assert result.returncode == 0, result.stderr
    with open(os.path.join(DOCS, "removed-apis.md"), encoding="utf-8") as handle:
        text = handle.read()
    # The file ends with the corpus scan's section (scripts/corpus-scan.py report writes it,
    # tests/inventory/test_corpus_data.py checks it); the inventory writes all before it.
    generated, corpus_heading, _ = text.partition("\n" + CORPUS_HEADING)
    assert generated == result.stdout and corpus_heading, (
        "regenerate: python -m compatfix.inventory --markdown > docs/removed-apis.md && "
        "python scripts/corpus-scan.py report"
    )


def test_every_named_shim_exists():
    names = {shim.name for shim in registry.builtin_shims()}
    named = {removal.shim for removal in inventory.REMOVALS if removal.shim}
    assert named - names == set()


def test_an_entry_has_exactly_one_of_shim_dependency_reason():
    for removal in inventory.REMOVALS:
        assert [removal.shim, removal.dependency, removal.reason].count(None) == 2, removal


def test_opt_in_entries_are_the_shims_off_by_default():
    defaults = {shim.name: shim.default for shim in registry.builtin_shims()}
    for removal in inventory.REMOVALS:
        if removal.shim:
            assert removal.opt_in == (not defaults[removal.shim]), removal


def test_the_sweep_s_leftovers_account_for_every_failure_left():
    sweeps = {sweep.packages: sweep for sweep in inventory.SWEEPS}
    left: dict[str, int] = {}
    for leftover in inventory.LEFTOVERS:
        assert leftover.packages in sweeps, leftover
        assert leftover.reason, leftover
        left[leftover.packages] = left.get(leftover.packages, 0) + leftover.modules
    assert left == {name: sweep.failing_on for name, sweep in sweeps.items() if sweep.failing_on}
    assert all(sweep.failing_on <= sweep.failing_off <= sweep.modules for sweep in inventory.SWEEPS)
