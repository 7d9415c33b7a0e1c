"""LeNet-5-style net for 1-channel 28x28 digits (LEMUR file format).

DEFAULT_IN_SHAPE is read by nnlite_tui.core.sources.discover for sample directories: this model is meant for
MNIST-like input, so it is discovered with (1, 1, 28, 28) unless the user passes another input shape.
"""

import torch
import torch.nn as nn

DEFAULT_IN_SHAPE = (1, 1, 28, 28)


def supported_hyperparameters():
    return {'lr', 'momentum', 'dropout'}


class Net(nn.Module):
    def train_setup(self, prm):
        self.to(self.device)
        self.criteria = (nn.CrossEntropyLoss().to(self.device),)
        self.optimizer = torch.optim.SGD(self.parameters(), lr=prm['lr'], momentum=prm['momentum'])

    def learn(self, train_data):
        self.train()
        for inputs, labels in train_data:
            inputs, labels = inputs.to(self.device), labels.to(self.device)
            self.optimizer.zero_grad()
            loss = self.criteria[0](self(inputs), labels)
            loss.backward()
            self.optimizer.step()

    def __init__(self, in_shape, out_shape, prm, device):
        super().__init__()
        self.device = device
        self.features = nn.Sequential(
            nn.Conv2d(in_shape[1], 6, 5, padding=2), nn.ReLU(inplace=True), nn.MaxPool2d(2),
            nn.Conv2d(6, 16, 5), nn.ReLU(inplace=True), nn.MaxPool2d(2),
        )
        # 5x5 for 28x28 input, as in LeNet-5; adaptive pooling keeps other sizes working.
        self.pool = nn.AdaptiveAvgPool2d(5)
        self.classifier = nn.Sequential(
            nn.Linear(16 * 5 * 5, 120), nn.ReLU(inplace=True), nn.Dropout(prm['dropout']),
            nn.Linear(120, 84), nn.ReLU(inplace=True),
            nn.Linear(84, out_shape[0]),
        )

    def forward(self, x):
        x = self.pool(self.features(x))
        return self.classifier(torch.flatten(x, 1))
