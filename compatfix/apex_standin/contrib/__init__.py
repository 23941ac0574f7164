"""``apex.contrib``: a package of optional extensions; compatfix stands in for
``apex.contrib.xentropy`` only."""

__all__: list[str] = []
