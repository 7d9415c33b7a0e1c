"""The results of a run: the typed report (model.py), its upgrade from every earlier schema
(upgrade.py), one summary row per report (summary.py), and the run directory's reports behind one
object with an index (run.py, index.py)."""

from nnlite_tui.core.results.model import LEMUR_KEYS, SCHEMA, SCHEMA_VERSION, Report
from nnlite_tui.core.results.run import RunResults, load_reports, open_results, read_report
from nnlite_tui.core.results.summary import UnitKey, UnitSummary, family_of
from nnlite_tui.core.results.upgrade import ReportError, parse_report, upgrade

__all__ = ["LEMUR_KEYS", "SCHEMA", "SCHEMA_VERSION", "Report", "ReportError", "RunResults", "UnitKey", "UnitSummary",
           "family_of", "load_reports", "open_results", "parse_report", "read_report", "upgrade"]
