"""Stage 1, sources: model discovery (LEMUR trees, folders, files, module:factory) -> units of work.

discover.py turns source strings into ModelSpecs, reading LEMUR trees (lemur.py, lemur_transform.py,
datasets.py) with ast and json only; units.py expands a model into its (runtime, precision) units;
task_inputs.py builds the example inputs a task needs, inside the conversion worker.
"""
