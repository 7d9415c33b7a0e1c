"""Model code runs in a sandbox: its own network namespace with only loopback, a read-only view of the
system, the Python environment and its sources, only its scratch writable, the user's home, the run
directory and the system temp directory out of sight, no new privileges, a cap on its processes,
and every process it starts dying with it (bubblewrap; policy.py).

availability.py finds what this machine allows, once per process; launch.py starts a process under
it; worker.py is the pool's worker in the sandbox; view.py and verdict.py say what a model attempted.
"""
