"""Writes, to every socket it holds, a result whose per-phase times are lists and strings rather than
numbers, then leaves with status 0: a runner that adds them up raises a TypeError."""

import json
import os
import struct

import torch.nn as nn


def supported_hyperparameters():
    return {'lr', 'momentum'}


class Net(nn.Module):
    def __init__(self, in_shape, out_shape, prm, device):
        super().__init__()
        body = json.dumps({"ok": True, "stage": "done", "phases": {"lower": [1, 2], "build": "x"},
                           "timings": {"lower_s": [3]}}).encode()
        for name in os.listdir("/proc/self/fd"):
            try:
                if os.readlink(f"/proc/self/fd/{name}").startswith("socket:"):
                    os.write(int(name), struct.pack(">I", len(body)) + body)
            except OSError:
                continue
        os._exit(0)
