"""Stage 4, reporting: the report document (document.py), summary.csv (summary.py), and the result
views that read a run's reports and store and never re-run anything: rows.py turns reports into
typed rows, html_report.py builds the self-contained HTML page (its data from html_source.py and
html_data.py, its tables and plots drawn by vendored libraries),
compare.py matches two runs and tests their medians. Where a unit's report lives, and reading it
back, is core/run_dir.py.
"""
