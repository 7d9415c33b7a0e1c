"""An error line names the exception without its module path: the console's error column is narrow."""

from nnlite_tui.core.outcomes import StageError, without_module_path
from nnlite_tui.tui.state import ModelRow
from nnlite_tui.tui.widgets.queue_rows import model_cells

QUALIFIED = "nnlite_tui.core.convert.worker.errors.SamplesAtInference"


def test_the_stored_error_reads_with_the_class_name_only():
    info = StageError(stage="export", type=QUALIFIED, message="the model samples random numbers at inference")
    assert info.text() == "export: SamplesAtInference: the model samples random numbers at inference"


def test_a_line_an_earlier_release_wrote_qualified_reads_the_same_and_others_are_left_alone():
    assert without_module_path(f"export: {QUALIFIED}: the model samples") == \
        "export: SamplesAtInference: the model samples"
    assert without_module_path("export: RuntimeError: torch.ops.aten.foo: no lowering") == \
        "export: RuntimeError: torch.ops.aten.foo: no lowering"  # a dotted name in the message stays
    assert without_module_path("load: model file not found: /a/b.c") == "load: model file not found: /a/b.c"


def test_the_queue_shows_the_cause_not_the_module_path():
    row = ModelRow("alt-038921ad0498328770ef0105774c92d6", order=0)
    row.status, row.error = "failed", f"export: {QUALIFIED}: the model samples random numbers at inference"
    cell = model_cells(row)[-1]
    # the stage and the cause first, the exception class last, and no module path anywhere
    assert cell.startswith("export: the model samples random numbers") and cell.endswith("(SamplesAtInference)")
    assert QUALIFIED not in cell
