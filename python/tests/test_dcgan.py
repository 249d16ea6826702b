"""20 training steps of a small DCGAN on random data, once with torch's layers and once with
convert(model) from the same initial weights: the losses agree at every step.

Tolerance: relative 1e-4 per loss. Both runs are float32; they differ only in the order in which
the convolutions sum (convgrad's kernels against torch's), ~1e-7 relative per op, and Adam and
the GAN's two-player dynamics amplify such differences over 20 steps. Measured on this test:
2.2e-7; the tolerance keeps over two orders of magnitude of headroom yet would catch any wrong
gradient (a wrong layer gradient changes the losses by far more within a few steps)."""
import copy

import torch
import torch.nn as nn

import convgrad.torch as cgt
from convgrad.models import dcgan_discriminator, dcgan_generator

STEPS, BATCH, NZ = 20, 8, 16


def train(gen, disc, data, noise):
    opt_g = torch.optim.Adam(gen.parameters(), lr=2e-4, betas=(0.5, 0.999))
    opt_d = torch.optim.Adam(disc.parameters(), lr=2e-4, betas=(0.5, 0.999))
    bce = nn.BCEWithLogitsLoss()
    ones, zeros = torch.ones(BATCH, 1), torch.zeros(BATCH, 1)
    losses = []
    for step in range(STEPS):
        fake = gen(noise[step])
        loss_d = bce(disc(data[step]), ones) + bce(disc(fake.detach()), zeros)
        opt_d.zero_grad()
        loss_d.backward()
        opt_d.step()
        loss_g = bce(disc(fake), ones)
        opt_g.zero_grad()
        loss_g.backward()
        opt_g.step()
        losses.append((loss_d.item(), loss_g.item()))
    return torch.tensor(losses, dtype=torch.float64)


def test_dcgan_training_matches_torch_layers():
    torch.manual_seed(0)
    gen = dcgan_generator(nz=NZ, ngf=8, nc=3, image=32)
    disc = dcgan_discriminator(ndf=8, nc=3, image=32)
    gen_cg, disc_cg = cgt.convert(copy.deepcopy(gen)), cgt.convert(copy.deepcopy(disc))
    assert any(isinstance(m, cgt.ConvTranspose2d) for m in gen_cg.modules())
    assert any(isinstance(m, cgt.Conv2d) for m in disc_cg.modules())
    data = torch.rand(STEPS, BATCH, 3, 32, 32) * 2 - 1
    noise = torch.randn(STEPS, BATCH, NZ, 1, 1)
    ref = train(gen, disc, data, noise)
    got = train(gen_cg, disc_cg, data, noise)
    rel = ((got - ref).abs() / ref.abs()).max().item()
    print(f"max relative loss difference over {STEPS} steps: {rel:.2e}")
    assert rel < 1e-4, f"losses differ by {rel:.2e}:\n{torch.stack([ref, got], -1)}"
    # The model really trained (the losses moved), so the comparison means something.
    assert (ref[0] - ref[-1]).abs().max() > 1e-3
