"""The committed corpus-scan data (acceptance/corpus/, from scripts/corpus-scan.py) is
well-formed, and docs/removed-apis.md's use-weighted coverage section is exactly what the
script renders from it: the figure in the docs cannot drift from the data."""

from __future__ import annotations

import gzip
import importlib.util
import json
import re
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "acceptance" / "corpus"


@pytest.fixture(scope="module")
def script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("corpus_scan", ROOT / "scripts" / "corpus-scan.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def uses(script: ModuleType) -> dict[str, Any]:
    return script.load_uses()


@pytest.fixture(scope="module")
def resolution() -> dict[str, Any]:
    with gzip.open(CORPUS / "resolution.json.gz", "rt", encoding="utf-8") as fh:
        return json.load(fh)


def test_repos_txt_names_at_least_200_distinct_snapshots(script: ModuleType) -> None:
    rows = script.read_repos()
    assert len(rows) >= 200
    names = [name for name, _, _ in rows]
    assert len(set(names)) == len(names)
    for name, commit, date in rows:
        assert re.fullmatch(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+", name), name
        assert re.fullmatch(r"[0-9a-f]{40}", commit), (name, commit)
        assert re.fullmatch(r"\d{4}-\d\d-\d\d", date), (name, date)


def test_uses_are_counted_per_scanned_repository(script: ModuleType, uses: dict[str, Any]) -> None:
    assert uses["schema"] == 1
    assert uses["repos"] == [name for name, _, _ in script.read_repos()]
    assert len(uses["stats"]) == len(uses["repos"])
    for stats in uses["stats"]:
        assert stats["parsed"] + stats["unparsable"] + stats["too_large"] + stats["missing"] == stats["py_files"]
    repo_count = len(uses["repos"])
    for key in ("names", "keywords", "subclasses", "super_init"):
        assert uses[key], key
        for item, per_repo in uses[key].items():
            head = item.partition("|")[0].partition(".")[0]
            assert head in script.LIBRARIES or item.startswith(script.DOOR_MODULES), item
            indexes = [index for index, _ in per_repo]
            assert len(set(indexes)) == len(indexes), item
            assert all(0 <= index < repo_count and count > 0 for index, count in per_repo), item


def test_every_counted_name_was_resolved_both_ways(uses: dict[str, Any], resolution: dict[str, Any]) -> None:
    assert set(resolution["names"]) == set(uses["names"])
    for name, row in resolution["names"].items():
        assert isinstance(row["off"], bool) and isinstance(row["on"], bool), name
        assert row["old"] in ("yes", "no", "unrecorded"), name
    assert resolution["versions"]["torch"]
    assert resolution["old_surface"] and all(meta["distributions"] for meta in resolution["old_surface"])


def test_the_docs_section_is_the_one_the_data_renders(script: ModuleType, uses: dict[str, Any],
                                                      resolution: dict[str, Any]) -> None:
    rows = script.load_rows(uses, resolution)
    explanations = json.loads(script.EXPLANATIONS_FILE.read_text())
    doors = json.loads(script.DOORS.read_text())
    expected = script.render_section(uses, resolution, rows, explanations, doors, 30)
    text = (ROOT / "docs" / "removed-apis.md").read_text()
    heading = "\n" + script.DOC_HEADING + "\n"
    assert heading in text
    section = text[text.index(heading) + 1:]
    assert section == expected
    # the appended section is the file's last top-level section
    assert not re.search(r"^## ", section[len(script.DOC_HEADING):], re.M)
    figure = script.figures(rows)
    assert "**%.2f%%**" % (100 * figure["share"]) in section
    assert figure["removed_uses"] > 0


def test_ranked_list_matches_the_entries(script: ModuleType, uses: dict[str, Any], resolution: dict[str, Any]) -> None:
    rows = script.load_rows(uses, resolution)
    lines = (CORPUS / "ranked.tsv").read_text().splitlines()
    header = lines[0].split("\t")
    assert header == ["kind", "entry", "uses", "repos", "old", "covered", "scope", "error", "why"]
    assert [line.split("\t")[1] for line in lines[1:]] == [row["entry"] for row in rows]
    # every removed entry that is uncovered, or out of the figure's scope, says why
    for line in lines[1:]:
        cells = dict(zip(header, line.split("\t")))
        assert cells["scope"] in ("in", "out"), line
        if cells["old"] == "yes" and (cells["covered"] == "no" or cells["scope"] == "out"):
            assert cells["why"].strip(), line


def test_out_of_scope_entries_are_a_small_named_share(script: ModuleType, uses: dict[str, Any],
                                                      resolution: dict[str, Any]) -> None:
    # Leaving entries out of the denominator must stay visible and bounded: each out-of-scope
    # key matches something, and the share of all removed uses is reported beside the figure.
    rows = script.load_rows(uses, resolution)
    keys = json.loads(script.OUT_OF_SCOPE_FILE.read_text())
    for key in keys:
        assert any(script._explain(r["entry"], {key: "x"}) for r in rows if r["old"] == "yes"), key
    figure = script.figures(rows)
    assert figure["out_of_scope_uses"] < figure["all_removed_uses"] / 4
    text = (ROOT / "docs" / "removed-apis.md").read_text()
    assert "%.2f%% of all %d uses of removed names" % (100 * figure["share_of_all"], figure["all_removed_uses"]) in text


def test_every_explanation_still_explains_an_uncovered_entry(script: ModuleType, uses: dict[str, Any],
                                                             resolution: dict[str, Any]) -> None:
    # A reason left behind after a shim covered its entry would mislabel the next entry that
    # happens to match its key.
    rows = script.load_rows(uses, resolution)
    explanations = json.loads(script.EXPLANATIONS_FILE.read_text())
    assert script.unused_explanations(rows, explanations) == []
    uncovered = next(r for r in rows if r["old"] == "yes" and not r["covered"])
    assert script.unused_explanations(rows, {**explanations, uncovered["entry"] + ".not_a_name": "x"}) \
        == [uncovered["entry"] + ".not_a_name"]


def test_doors_count_real_repositories(uses: dict[str, Any]) -> None:
    doors = json.loads((CORPUS / "doors.json").read_text())
    assert doors["repos_scanned"] == len(uses["repos"])
    assert doors["doors"]
    for door, info in doors["doors"].items():
        assert 0 < info["repos"] <= info["uses"], door
        assert set(info["top_repos"]) <= set(uses["repos"]), door
