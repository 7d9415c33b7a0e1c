"""EfficientNet-style net: MBConv blocks with squeeze-and-excitation and SiLU (LEMUR file format)."""

import torch
import torch.nn as nn


def supported_hyperparameters():
    return {'lr', 'momentum', 'dropout'}


class SqueezeExcite(nn.Module):
    def __init__(self, channels, squeezed):
        super().__init__()
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc1 = nn.Conv2d(channels, squeezed, 1)
        self.fc2 = nn.Conv2d(squeezed, channels, 1)
        self.act = nn.SiLU(inplace=True)

    def forward(self, x):
        s = self.fc2(self.act(self.fc1(self.pool(x))))
        return x * torch.sigmoid(s)


class MBConv(nn.Module):
    def __init__(self, cin, cout, k, stride, expand):
        super().__init__()
        hidden = cin * expand
        self.use_res = stride == 1 and cin == cout
        layers = []
        if expand != 1:
            layers += [nn.Conv2d(cin, hidden, 1, bias=False), nn.BatchNorm2d(hidden), nn.SiLU(inplace=True)]
        layers += [
            nn.Conv2d(hidden, hidden, k, stride, k // 2, groups=hidden, bias=False), nn.BatchNorm2d(hidden),
            nn.SiLU(inplace=True),
            SqueezeExcite(hidden, max(1, cin // 4)),
            nn.Conv2d(hidden, cout, 1, bias=False), nn.BatchNorm2d(cout),
        ]
        self.block = nn.Sequential(*layers)

    def forward(self, x):
        return x + self.block(x) if self.use_res else self.block(x)


class Net(nn.Module):
    # (expansion, kernel, out channels, repeats, first stride), EfficientNet-B0's table, shallower and narrower.
    CONFIG = ((1, 3, 16, 1, 1), (6, 3, 24, 2, 2), (6, 5, 40, 2, 2), (6, 3, 80, 2, 2), (6, 5, 112, 1, 1))

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
        layers = [nn.Conv2d(in_shape[1], 32, 3, 1, 1, bias=False), nn.BatchNorm2d(32), nn.SiLU(inplace=True)]
        cin = 32
        for t, k, c, n, s in self.CONFIG:
            for i in range(n):
                layers.append(MBConv(cin, c, k, s if i == 0 else 1, t))
                cin = c
        layers += [nn.Conv2d(cin, 320, 1, bias=False), nn.BatchNorm2d(320), nn.SiLU(inplace=True)]
        self.features = nn.Sequential(*layers)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.classifier = nn.Sequential(nn.Dropout(prm['dropout']), nn.Linear(320, out_shape[0]))
        # He (fan-in) init, as for a network about to be trained: with PyTorch's default the signal
        # fades layer by layer and the output is the same for any input, which leaves the
        # conversion check nothing to compare (nnlite reports that as a weak check).
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode='fan_in', nonlinearity='relu')

    def forward(self, x):
        x = self.pool(self.features(x))
        return self.classifier(torch.flatten(x, 1))
