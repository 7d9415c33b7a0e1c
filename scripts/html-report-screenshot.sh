#!/bin/sh
# Regenerates docs/html-report.png: the browser test renders a real small run in headless Chromium
# and, asked through NNLITE_SCREENSHOTS, copies its full-page screenshot into docs/.
set -eu
cd "$(dirname "$0")/.."
NNLITE_SCREENSHOTS="$PWD/docs" PYTHONPATH="$PWD" .venv/bin/python -m pytest -q -p no:cacheprovider \
    tests/results/test_html_browser.py -k fits_the_page
ls -l docs/html-report.png
