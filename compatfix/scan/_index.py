"""The names ``compatfix scan`` looks for, built once from the same data the runtime uses:
every shim record's ``renames``/``rewrites`` (and, for a record without them, its
restored names and provided modules) and every inventory entry's ``renames``/``rewrites``.
Nothing here is a list of names of its own.

A key is a dotted name (which also covers every name below it) or a call pattern; the
syntax is ``compatfix.registry.Shim``'s: ``name()``, ``*.method('--x')``, ``name(+kw)``,
``name(-kw:N)``, ``module.*(...)``.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Iterable

from compatfix.inventory import REMOVALS, Removal
from compatfix.registry import PROVIDE, Shim


@dataclass(frozen=True)
class Source:
    """What a pattern comes from: a shim, or an inventory entry no shim covers, and what
    replaces the name."""

    replacement: str
    mechanical: bool
    shim: Shim | None = None
    removal: Removal | None = None
    # the inventory entry of a name that came back with another meaning, and that meaning
    returned: tuple[Removal, str] | None = None

    @property
    def id(self) -> str:
        """A stable rule id: the shim's name, or ``inventory:`` and the entry's first key."""
        if self.shim is not None:
            return self.shim.name
        assert self.removal is not None
        return "inventory:" + next(iter({**self.removal.renames, **self.removal.rewrites}))


@dataclass
class Pattern:
    """One key, parsed."""

    key: str
    name: str  # the dotted name, "*.method" or "module.*"
    call: bool = False  # only a call matches
    string_argument: str | None = None  # a positional argument equal to this string
    with_keyword: str | None = None
    without_keyword: str | None = None
    without_position: int | None = None  # ... nor as this positional argument
    sources: list[Source] = field(default_factory=list)

    def matches_call(self, positional: list[object], keywords: set[str], unpacked: bool) -> bool:
        """Whether a call with these arguments matches (``positional``: the arguments'
        constant values, or None where not a constant; ``unpacked``: it passes ``*args``
        or ``**kwargs``, so what it passes is unknown)."""
        if self.string_argument is not None and self.string_argument not in positional:
            return False
        if self.with_keyword is not None and self.with_keyword not in keywords:
            return False
        if self.without_keyword is not None:
            if unpacked or self.without_keyword in keywords:
                return False
            if self.without_position is not None and len(positional) > self.without_position:
                return False
        return True


def parse_key(key: str) -> Pattern:
    """``'yaml.load(-Loader:1)'`` -> Pattern(name='yaml.load', call=True, without_keyword='Loader', ...)."""
    name, paren, rest = key.partition("(")
    pattern = Pattern(key=key, name=name.strip())
    if not paren:
        return pattern
    if not rest.endswith(")"):
        raise ValueError("scan key %r: a call pattern ends with ')'" % key)
    pattern.call = True
    inside = rest[:-1].strip()
    if not inside:
        return pattern
    if inside[0] in "'\"" and inside[-1] == inside[0]:
        pattern.string_argument = inside[1:-1]
    elif inside.startswith("+"):
        pattern.with_keyword = inside[1:]
    elif inside.startswith("-"):
        keyword, _, position = inside[1:].partition(":")
        pattern.without_keyword = keyword
        pattern.without_position = int(position) if position else None
    else:
        raise ValueError("scan key %r: unknown argument condition %r" % (key, inside))
    return pattern


def shim_keys(shim: Shim) -> dict[str, tuple[str, bool]]:
    """key -> (replacement, mechanical) for one shim: its renames and rewrites, and its
    restored names and provided modules that neither names (with the record's replacement)."""
    keys: dict[str, tuple[str, bool]] = {}
    for key, new in shim.renames.items():
        keys[key] = (new, True)
    for key, how in shim.rewrites.items():
        keys[key] = (how, False)
    fallback = shim.replacement or shim.summary
    for target in shim.targets:
        for name in sorted(shim.restores):
            keys.setdefault("%s.%s" % (target, name), (fallback, False))
        if shim.kind == PROVIDE:
            keys.setdefault(target, (fallback, False))
    return keys


def removal_keys(removal: Removal) -> dict[str, tuple[str, bool]]:
    keys = {key: (new, True) for key, new in removal.renames.items()}
    keys.update((key, (how, False)) for key, how in removal.rewrites.items())
    return keys


@dataclass
class Index:
    """The patterns by how a use is looked up."""

    names: dict[str, Pattern] = field(default_factory=dict)  # dotted references
    calls: dict[str, list[Pattern]] = field(default_factory=dict)  # calls of a dotted name
    module_calls: dict[str, list[Pattern]] = field(default_factory=dict)  # calls of any name of a module
    methods: dict[str, list[Pattern]] = field(default_factory=dict)  # calls of a method on anything
    patterns: dict[str, Pattern] = field(default_factory=dict)  # key -> pattern

    def add(self, key: str, source: Source) -> None:
        pattern = self.patterns.get(key)
        if pattern is None:
            pattern = self.patterns[key] = parse_key(key)
            if pattern.name.startswith("*."):
                self.methods.setdefault(pattern.name[2:], []).append(pattern)
            elif pattern.name.endswith(".*"):
                self.module_calls.setdefault(pattern.name[:-2], []).append(pattern)
            elif pattern.call:
                self.calls.setdefault(pattern.name, []).append(pattern)
            else:
                self.names[pattern.name] = pattern
        pattern.sources.append(source)

    def lookup_name(self, dotted: str) -> Pattern | None:
        """The pattern of the longest known prefix of ``dotted`` (``numpy.float.__name__``
        -> ``numpy.float``), or None."""
        parts = dotted.split(".")
        for end in range(len(parts), 0, -1):
            pattern = self.names.get(".".join(parts[:end]))
            if pattern is not None:
                return pattern
        return None


def build_index(shims: Iterable[Shim], removals: Iterable[Removal] = REMOVALS) -> Index:
    """The index of every shim's and every inventory entry's keys; an inventory key that a
    shim already names is the shim's (the entry's status is the shim's then)."""
    index = Index()
    for shim in shims:
        for key, (replacement, mechanical) in shim_keys(shim).items():
            index.add(key, Source(replacement, mechanical, shim=shim))
    for removal in removals:
        for key, (replacement, mechanical) in removal_keys(removal).items():
            if key in index.patterns:
                continue
            index.add(key, Source(replacement, mechanical, removal=removal))
        for key, meaning in removal.returned.items():
            pattern = index.patterns.get(key)
            if pattern is not None:
                pattern.sources = [replace(source, returned=(removal, meaning)) for source in pattern.sources]
    return index
