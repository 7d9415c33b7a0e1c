#!/bin/sh
# Regenerates docs/html-report.png and docs/runtime-view.png: the browser tests render real small runs
# in headless Chromium and, asked through NNLITE_SCREENSHOTS, copy their screenshots into docs/.
set -eu
cd "$(dirname "$0")/.."
NNLITE_SCREENSHOTS="$PWD/docs" PYTHONPATH="$PWD" .venv/bin/python -m pytest -q -p no:cacheprovider \
    tests/results/test_html_browser.py -k "fits_the_page or runtime_view"
ls -l docs/html-report.png docs/runtime-view.png
