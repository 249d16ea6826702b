"""Small reference networks built from torch.nn layers, shared by the tests and the benchmark:
a DCGAN generator and discriminator, a U-Net decoder, a ResNet-50 bottleneck. Pass them to
convgrad.torch.convert() to run their convolutions through convgrad."""
import torch
import torch.nn as nn


def dcgan_generator(nz=100, ngf=64, nc=3, image=64):
    """DCGAN generator (Radford et al.): nz x 1 x 1 -> nc x image x image."""
    layers, ch, size = [], ngf * (image // 8), 4
    layers += [nn.ConvTranspose2d(nz, ch, 4, 1, 0, bias=False), nn.BatchNorm2d(ch), nn.ReLU(True)]
    while size < image // 2:
        layers += [nn.ConvTranspose2d(ch, ch // 2, 4, 2, 1, bias=False), nn.BatchNorm2d(ch // 2),
                   nn.ReLU(True)]
        ch, size = ch // 2, size * 2
    layers += [nn.ConvTranspose2d(ch, nc, 4, 2, 1, bias=False), nn.Tanh()]
    return nn.Sequential(*layers)


def dcgan_discriminator(ndf=64, nc=3, image=64):
    """DCGAN discriminator: nc x image x image -> 1 logit per sample."""
    layers, ch, size = [nn.Conv2d(nc, ndf, 4, 2, 1, bias=False), nn.LeakyReLU(0.2, True)], ndf, image // 2
    while size > 4:
        layers += [nn.Conv2d(ch, ch * 2, 4, 2, 1, bias=False), nn.BatchNorm2d(ch * 2),
                   nn.LeakyReLU(0.2, True)]
        ch, size = ch * 2, size // 2
    layers += [nn.Conv2d(ch, 1, 4, 1, 0, bias=False), nn.Flatten()]
    return nn.Sequential(*layers)


class Bottleneck(nn.Module):
    """ResNet-50 bottleneck block (1x1 -> 3x3 -> 1x1, projection shortcut when needed)."""

    def __init__(self, cin, width, stride=1):
        super().__init__()
        cout = width * 4
        self.conv1 = nn.Conv2d(cin, width, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(width)
        self.conv2 = nn.Conv2d(width, width, 3, stride, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(width)
        self.conv3 = nn.Conv2d(width, cout, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(cout)
        self.relu = nn.ReLU(True)
        self.down = None
        if stride != 1 or cin != cout:
            self.down = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        y = self.relu(self.bn1(self.conv1(x)))
        y = self.relu(self.bn2(self.conv2(y)))
        y = self.bn3(self.conv3(y))
        return self.relu(y + (x if self.down is None else self.down(x)))


class UNetDecoder(nn.Module):
    """U-Net decoder: per level, ConvTranspose2d 2x2 s2 up, concat with the skip, two 3x3 convs."""

    def __init__(self, channels=(256, 128, 64, 32), out=2):
        super().__init__()
        self.ups, self.convs = nn.ModuleList(), nn.ModuleList()
        for cin, cout in zip(channels[:-1], channels[1:]):
            self.ups.append(nn.ConvTranspose2d(cin, cout, 2, 2))
            self.convs.append(nn.Sequential(nn.Conv2d(2 * cout, cout, 3, padding=1), nn.ReLU(True),
                                            nn.Conv2d(cout, cout, 3, padding=1), nn.ReLU(True)))
        self.head = nn.Conv2d(channels[-1], out, 1)

    def forward(self, x, skips):
        for up, conv, skip in zip(self.ups, self.convs, skips):
            x = conv(torch.cat([up(x), skip], 1))
        return self.head(x)
