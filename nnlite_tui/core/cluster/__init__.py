"""The pipeline over a Ray cluster (`nnlite run --cluster ADDRESS`).

Importing this package imports nothing heavy; its modules import ray, which is an optional extra
(`pip install 'nnlite-tui[ray]'`), and are imported only when --cluster is given.

What runs where: the driver (the `nnlite run` process) is the normal Pipeline and stays the single
writer of the store, events and control, and owns the conversion cache. Conversion actors
(convert_actor.py) run core.convert's worker process on whichever node Ray places them; one
device service actor per node (device_actor.py) lists that node's adb devices and host, and one
device actor per device runs its benchmarks there, one at a time. RayConverter and RemoteDevice
are the driver-side stand-ins with the interfaces the Pipeline already knows.
"""
