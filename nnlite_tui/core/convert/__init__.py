"""Stage 2, conversion: runtime-agnostic orchestration of turning models into artifacts.

converter.py lends worker processes (pool.py) out one job at a time, through the content-addressed
cache (cache*.py); ranking.py and cost_probe.py order the work costliest first; derive.py keys and
runs derived precisions; step.py is the conversion step the Runner calls. What runs inside the
worker process, with torch imported, lives in worker/; what is specific to one runtime lives in
core/runtimes/<name>/.
"""
