"""One module per CLI subcommand, imported lazily by nnlite_tui.cli."""
