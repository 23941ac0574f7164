"""Built-in shims, one module per target library. Each module declares ``SHIMS``, a
sequence of ``compatfix.registry.Shim`` records, and must not import its target at
module level: the engine imports these modules on the first target import."""
