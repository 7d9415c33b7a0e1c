"""The Runner and what steers it: pipeline.py (one unit's walk from source to report), its queues
(scheduling.py), operator control (control.py, watch.py), recovery, resume, the run's config and
set-up, and the reporters that print events or write events.jsonl (console.py, jsonl.py,
event_log.py).
"""
