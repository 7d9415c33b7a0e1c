"""Fails with terminal sequences in its error message: a window title change (OSC), a screen clear
and a colour (CSI, in its 7-bit and its one-character C1 form), a bell, a carriage return that would
overwrite the line, and a right-to-left override."""

import torch.nn as nn

SEQUENCES = "\x1b]0;pwned\x07\x1b[2J\x1b[H\x9b31m\rEVIL\u202etxt.exe\x1b]52;c;cHduZWQ=\x07"


def supported_hyperparameters():
    return {'lr', 'momentum'}


class Net(nn.Module):
    def __init__(self, in_shape, out_shape, prm, device):
        super().__init__()
        raise RuntimeError("look here" + SEQUENCES + " and here")
