"""The host card shows what disturbs a host measurement, not just "idle"/"busy"."""

from nnlite_tui.core.devices.host_load import HostLoad
from nnlite_tui.core.events import DeviceState, ModelStatus, RunStarted
from nnlite_tui.tui.widgets.devices import DevicesPane, host_lines

from .conftest import FROZEN, feed, frozen_app


def test_host_lines_name_conversions_beside_a_benchmark_and_other_processes():
    load = HostLoad(cores=2, load_1m=4.2, busy_percent=90.0, run_percent=30.0, others_percent=60.0, temperature_c=71.0)
    text = "\n".join(c.plain for c in host_lines(load, converting=2, benchmarking=True, held=False))
    assert "2 conversion(s) beside the benchmark" in text and "load 4.2/2 cores" in text and "60% CPU" in text
    held = "\n".join(c.plain for c in host_lines(None, converting=1, benchmarking=True, held=True))
    assert held == "1 conversion(s) held while it times"
    assert [c.plain for c in host_lines(None, 1, False, False)] == ["converting 1 unit(s)"]


async def test_host_card_counts_the_conversions_in_flight():
    app = frozen_app()
    async with app.run_test(size=(160, 45)) as pilot:
        await feed(app, pilot, RunStarted("runs/t1", ("a", "b"), ("host",), ts=FROZEN),
                   DeviceState("host", "busy", kind="host", model="a", ts=FROZEN),
                   ModelStatus("a", "benchmarking", attempt=1, device="host", ts=FROZEN),
                   ModelStatus("b", "converting", attempt=1, ts=FROZEN))
        card = app.screen.query_one(DevicesPane).cards["host"]
        assert "1 conversion(s) beside the benchmark" in str(card.render())
