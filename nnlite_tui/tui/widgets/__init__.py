"""One module per pane of the console."""
