"""nnlite-tui: convert PyTorch models to LiteRT and ExecuTorch and benchmark them on Android devices or the host.

This module holds the version only: importing the package must stay cheap and must never pull in
Textual, torch or litert_torch (the CLI's start-up time depends on it).
"""

__version__ = "0.1.0"
