"""Stage 3, benchmarking: the protocol every device follows, whatever the runtime.

settings.py (what to measure), protocol.py (the timed loop and the result block), block.py (the result
block's types, key for key as the app writes it), stats.py,
input_fill.py / input_check.py (what a model is fed, checked on the host), isolation.py (no
conversion shares the CPU with a host benchmark), step.py (the benchmark step the Runner calls).
"""
