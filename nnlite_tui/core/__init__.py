"""The Textual-free core, one package per stage of a unit's walk from source to report:

sources/ -> convert/ -> bench/ on devices/ -> report/, driven by run/ (the Runner) with its state in
store/; what is specific to one on-device runtime lives in runtimes/<name>/ behind runtimes/base.py;
ops/ holds per-op views and the predictor; cluster/ runs the same pipeline over Ray. The modules at
this level are the stages' shared vocabulary: spec.py (a unit), outcomes.py (what steps hand the
Runner), events.py (what reporters hear), run_dir.py (a run directory's layout), disk.py, versions.py.
"""
