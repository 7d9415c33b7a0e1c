"""ResNet-18 topology (BasicBlock x [2, 2, 2, 2]) at a quarter of the width (LEMUR file format)."""

import torch
import torch.nn as nn


def supported_hyperparameters():
    return {'lr', 'momentum', 'dropout'}


class BasicBlock(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.relu = nn.ReLU(inplace=True)
        self.downsample = None
        if stride != 1 or cin != cout:
            self.downsample = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        identity = x if self.downsample is None else self.downsample(x)
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return self.relu(out + identity)


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
        base = 16
        # CIFAR-style stem (3x3, no max pool) so 32x32 input keeps enough resolution.
        self.stem = nn.Sequential(
            nn.Conv2d(in_shape[1], base, 3, 1, 1, bias=False), nn.BatchNorm2d(base), nn.ReLU(inplace=True)
        )
        blocks, cin = [], base
        for i, width in enumerate((base, base * 2, base * 4, base * 8)):
            stride = 1 if i == 0 else 2
            blocks += [BasicBlock(cin, width, stride), BasicBlock(width, width, 1)]
            cin = width
        self.layers = nn.Sequential(*blocks)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.dropout = nn.Dropout(prm['dropout'])
        self.fc = nn.Linear(cin, out_shape[0])

    def forward(self, x):
        x = self.pool(self.layers(self.stem(x)))
        return self.fc(self.dropout(torch.flatten(x, 1)))
