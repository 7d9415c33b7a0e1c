"""Result views: read a run's reports and store, never re-run anything.

rows.py turns reports into typed rows; svg.py draws plots as inline SVG; html_report.py builds the
self-contained HTML page; compare.py matches two runs and tests their medians by bootstrap.
"""
