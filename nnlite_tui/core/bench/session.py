"""What a runtime hands the benchmark protocol: one loaded model, ready to be fed and timed."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from nnlite_tui.core.bench.settings import BenchSettings


class NativeClock(Protocol):
    last_ns: int | None


class BenchSession(Protocol):
    """One model loaded in one runtime, ready to be fed and timed (runtimes/<name>/ implement it).

    `invoke` is the runtime's own inference call (a bound method, not a wrapper), so the timed loop
    adds nothing of ours around it. `inputs()` describes each input as LiteRT's interpreter does:
    {"index", "shape", "dtype" (a numpy type), "quantization" ((scale, zero_point) or None)}.
    `reset_inputs`, where not None, copies the inputs in again and is called before every inference,
    outside the timed interval: a runtime whose memory plan reuses input buffers for activations
    (ExecuTorch) would otherwise run every inference after the first on whatever the last one left
    there. None (LiteRT): the inputs are set once, and the loop is the inference call alone.
    """

    invoke: Callable[[], Any]
    reset_inputs: Callable[[], Any] | None
    native: NativeClock | None  # the last native interval, where the runtime has a native clock
    timing: dict[str, Any]  # what the wall and native clocks measure ({"wall_clock", "native_clock"})

    def inputs(self) -> list[dict[str, Any]]: ...

    def set_input(self, detail: dict[str, Any], value: Any) -> None: ...

    def output_shapes(self) -> list[list[int]]: ...

    def delegation(self) -> dict[str, Any]: ...

    def check(self, settings: BenchSettings) -> None:
        """Refuse settings this loaded model cannot honour (BenchmarkError("load", ...))."""
