"""What a runtime hands the benchmark protocol: one loaded model, ready to be fed and timed."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from nnlite_tui.core.bench.block import Delegation, InputDetail, SessionTiming
from nnlite_tui.core.bench.settings import BenchSettings


class NativeClock(Protocol):
    @property
    def last_ns(self) -> int | None: ...


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

    # Read-only members (properties here), so that a session may hold them as plain attributes of
    # narrower types: LiteRT's `reset_inputs` is always None, ExecuTorch's `native` too.
    @property
    def invoke(self) -> Callable[[], Any]: ...

    @property
    def reset_inputs(self) -> Callable[[], Any] | None: ...

    @property
    def native(self) -> NativeClock | None:
        """The last native interval, where the runtime has a native clock."""

    @property
    def timing(self) -> SessionTiming:
        """What the wall and native clocks measure."""

    def inputs(self) -> list[InputDetail]: ...

    def set_input(self, detail: InputDetail, value: Any) -> None: ...

    def output_shapes(self) -> list[list[int]]: ...

    def delegation(self) -> Delegation: ...

    def check(self, settings: BenchSettings) -> None:
        """Refuse settings this loaded model cannot honour (BenchmarkError("load", ...))."""
