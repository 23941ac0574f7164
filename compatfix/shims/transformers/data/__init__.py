"""Shims for ``transformers.data``: the GLUE-era ``processors`` and ``metrics`` packages
that transformers 5 removed (deprecated since 4.x in favour of the datasets and evaluate
libraries), in the files that mirror them."""
