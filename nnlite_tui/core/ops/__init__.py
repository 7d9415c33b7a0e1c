"""Per-op views of a converted model, whatever the runtime: its graph with the work each op does
(graph.py), the report's per-op block (block.py), the checks every block passes (block_check.py),
blocks of earlier schemas read as the current one (block_versions.py), and the learning-free
latency predictor built from measured per-op times (predictor.py, fit.py). Each runtime reads its
own artifacts into graph.Graph and profiles its own ops (runtimes/<name>/).
"""
