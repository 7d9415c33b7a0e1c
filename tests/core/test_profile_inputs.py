"""The profiled pass after the timed runs runs on the timed runs' own inputs: a token model's ids stay
inside its embedding table there too, in both runtimes (before, LiteRT's pass filled a float byte
pattern and ExecuTorch's ids in [0, 127): a vocabulary of 50 made both passes fail)."""

from __future__ import annotations

import pytest

from nnlite_tui.core.bench.settings import BenchSettings
from nnlite_tui.core.outcomes import ConversionResult
from tests.conftest import FIXTURES

pytestmark = pytest.mark.slow
CAPTIONING = FIXTURES / "tokens" / "captioning_vocab50.py"
SETTINGS = BenchSettings(warmup=1, runs=3, min_seconds=0.0, warmup_seconds=0.0, profile_ops="xnnpack", profile_runs=5)


def _converted(tmp_path, runtime_name: str) -> ConversionResult:
    from nnlite_tui.core.convert.worker.job import convert_one
    from nnlite_tui.core.runtimes import get_runtime
    from nnlite_tui.core.sources.discover import discover

    runtime = get_runtime(runtime_name)
    spec = discover([f"{CAPTIONING}:make"])[0]
    out = tmp_path / f"cap{runtime.suffix}"
    return ConversionResult.from_converter({"model": spec.name, **convert_one(spec, str(out), runtime)})


@pytest.mark.parametrize("runtime_name", ["litert", "executorch"])
def test_a_token_models_profiled_pass_runs_inside_its_table(tmp_path, runtime_name):
    if runtime_name == "litert":
        pytest.importorskip("litert_torch")
    else:
        pytest.importorskip("executorch")
    from nnlite_tui.core.bench.protocol import benchmark_result
    from nnlite_tui.core.runtimes import get_runtime

    artifact = _converted(tmp_path, runtime_name).artifact
    assert artifact.input_ranges == (None, (0, 50))
    result = benchmark_result(artifact.path, SETTINGS, profile=True, runtime=runtime_name,
                              ranges=artifact.input_ranges)
    assert result["valid"], result.get("error_message")
    ops = result["ops"]
    assert "error" not in ops, ops.get("error")
    timed = [row for row in ops["ops"] if row.get("median_us") is not None]
    assert timed, "no op of the token model was timed"
    # The same pass told no range indexes past the 50-row table and says so in its block.
    unranged = get_runtime(runtime_name).profile(artifact.path, SETTINGS)
    assert unranged["ops"].get("error"), "ids outside the table ran: this test would not tell the fill apart"
