"""Puts its whole environment into its error message (where tokens and passwords would show)."""

import os

import torch.nn as nn


def supported_hyperparameters():
    return {'lr', 'momentum'}


class Net(nn.Module):
    def __init__(self, in_shape, out_shape, prm, device):
        super().__init__()
        raise RuntimeError("environment: " + repr(sorted(os.environ.items())))
