"""The Textual control console. Imported only by `nnlite tui` / `nnlite run` on a terminal, never by core."""
