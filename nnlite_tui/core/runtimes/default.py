"""The default runtime's name, importable by the lowest stages (the unit, the outcomes) without the
registry and its protocol: what a unit without "@<runtime>" runs in, and what reports written before
runtimes existed were measured with. The registry (__init__.py) lists it first."""

DEFAULT_RUNTIME = "litert"
