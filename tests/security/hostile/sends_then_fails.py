"""Writes a result to every socket it holds, then its process ends with status 3: what it sent is
what a process that stops (or is killed by) another after sending would leave."""

import json
import os
import struct

import torch.nn as nn


def supported_hyperparameters():
    return {'lr', 'momentum'}


class Net(nn.Module):
    def __init__(self, in_shape, out_shape, prm, device):
        super().__init__()
        body = json.dumps({"ok": False, "stage": "export", "error_type": "SentBeforeDying",
                           "error_message": "sent, then the process failed"}).encode()
        for name in os.listdir("/proc/self/fd"):
            try:
                if os.readlink(f"/proc/self/fd/{name}").startswith("socket:"):
                    os.write(int(name), struct.pack(">I", len(body)) + body)
            except OSError:
                continue
        os._exit(3)
