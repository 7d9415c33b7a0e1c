"""The conversion worker process: imports torch once, builds models, hands each job to its runtime.

main.py is the process (`python -m nnlite_tui.core.convert.worker.main`); model.py builds a model
from its spec and wraps it for export; errors.py and offline.py say why model code failed.
"""
