"""Every operator command reaches the run's event log, from this process's console or the channel."""

import threading

from nnlite_tui.core.events import RunControl
from nnlite_tui.core.run.control import Control, ControlChannel
from nnlite_tui.core.run.scheduling import WorkQueue
from nnlite_tui.core.run.watch import RunWatch


def test_console_and_channel_commands_are_emitted_once_each(tmp_path):
    control, channel, emitted = Control(), ControlChannel(tmp_path), []
    channel.skip_existing()
    done = threading.Event()
    worker = threading.Thread(target=done.wait, args=(5,))
    worker.start()
    watch = RunWatch(control, channel, WorkQueue(["host"], 1), emitted.append, retry=lambda name: None,
                     kill_children=lambda: None)
    control.command("skip", "a")  # this process's console
    control.command("pause")
    ControlChannel(tmp_path).send("retry", "b")  # a console attached from another process
    ControlChannel(tmp_path).send("resume")
    threading.Timer(0.5, done.set).start()
    watch.until_done([worker])
    notes = [(e.action, e.model) for e in emitted if isinstance(e, RunControl)]
    assert notes == [("skip", "a"), ("pause", None), ("retry", "b"), ("resume", None)]
    assert control.should_skip("a") and not control.paused
