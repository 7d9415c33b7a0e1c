"""The host card's figure of what disturbs a measurement: CPU of processes outside the run."""

import subprocess
import sys

from nnlite_tui.core.devices.host_load import CpuSample, HostLoadSampler, shares


def test_shares_split_machine_busy_time_into_the_runs_and_the_others():
    before = CpuSample(wall=10.0, busy_s=100.0, run_s={1: 5.0, 2: 1.0})
    # 2 s on 4 cores = 8 CPU-seconds; the machine was busy 6 of them; the run used 1.5 (pid 2 ended,
    # pid 1 reaped 0.5 of it; pid 3 is new).
    after = CpuSample(wall=12.0, busy_s=106.0, run_s={1: 6.0, 3: 0.5})
    busy, run, others = shares(before, after, cores=4)
    assert busy == 75.0 and run == 18.75 and others == 56.25
    assert shares(after, after, cores=4) is None


def test_the_cpu_of_a_child_of_the_run_counts_as_the_runs():
    """The child burns 0.3 CPU-seconds (by its own clock, whatever the machine's load) and is reaped:
    the run's share between two samples holds at least that."""
    sampler = HostLoadSampler()
    assert sampler.sample().run_percent is None  # the first sample has nothing to compare with
    before = sampler._cpu_sample()
    burn = "import time\nwhile time.process_time() < 0.3: pass"
    subprocess.run([sys.executable, "-c", burn], check=True)
    after = sampler._cpu_sample()
    busy, run, others = shares(before, after, sampler.cores)
    run_cpu_s = run / 100 * (after.wall - before.wall) * sampler.cores
    assert run_cpu_s >= 0.3 - 0.02  # user and system times are counted in 10 ms ticks each
    assert busy >= run and others >= 0.0
