"""A small CNN that does nothing but be converted."""

import torch
import torch.nn as nn


def supported_hyperparameters():
    return {'lr', 'momentum'}


class Net(nn.Module):
    def __init__(self, in_shape, out_shape, prm, device):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(in_shape[1], 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                                      nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1))
        self.classifier = nn.Linear(32, out_shape[0])

    def forward(self, x):
        return self.classifier(torch.flatten(self.features(x), 1))
