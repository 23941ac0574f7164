#!/usr/bin/env bash
# Lint the package and type-check its public API:
#
#   scripts/lint.sh            (sets up .venvs/lint from requirements/lint.txt first)
#
# ruff: the rules in pyproject.toml ([tool.ruff]) over compatfix/, the bootstrap, scripts/
# and benchmarks/. mypy: the modules whose names the docs promise (patching, registry,
# the decision, the engine and its floors, the CLI, the package root); settings in [tool.mypy].
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
bash scripts/setup-stacks.sh lint >/dev/null
echo "[lint] ruff"
.venvs/lint/bin/ruff check --output-format concise compatfix _compatfix_bootstrap.py scripts benchmarks
echo "[lint] mypy (public API)"
.venvs/lint/bin/mypy compatfix/__init__.py compatfix/patching.py compatfix/registry.py \
    compatfix/_decision.py compatfix/_engine.py compatfix/cli.py compatfix/_settings.py \
    compatfix/_plugins.py compatfix/_first_use.py compatfix/_finder.py compatfix/_outcomes.py
echo "[lint] ok"
