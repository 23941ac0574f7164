"""Shims for scikit-learn; each submodule's shims live beside this file (``utils.py`` for
``sklearn.utils.linear_assignment_``, ``externals.py`` for ``sklearn.externals.joblib``)."""
