"""One process of the DDP test (test_ddp.py starts two): trains a model of convgrad layers with
DistributedDataParallel over gloo on 127.0.0.1, and after every step compares the gradients
DDP produced with those of a plain copy of the model on the combined batch of both ranks.
Exits 0 on success; prints the largest difference seen."""
import copy
import os
import sys
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

import convgrad
import convgrad.torch as cgt

STEPS, LOCAL_BATCH = 5, 4
# Gradients: f32 sums whose order differs (two half-batch sums averaged by allreduce against
# one full-batch sum). Each is within gamma_K * sum|terms| of the exact value; relative to the
# tensor's largest gradient element that is ~1e-6 here, so 1e-5 is a bound with headroom, and
# any real mismatch (a rank's gradient missing, a wrong layer gradient) is O(1).
TOL = 1e-5


def model():
    return nn.Sequential(
        cgt.Conv2d(3, 8, 3, padding=1), nn.ReLU(),
        cgt.Conv2d(8, 16, 4, stride=2, padding=1, groups=2), nn.ReLU(),
        cgt.ConvTranspose2d(16, 8, 4, stride=2, padding=1), nn.ReLU(),
        cgt.Conv2d(8, 1, 1))


def main():
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    torch.set_num_threads(1)
    convgrad.set_num_threads(1)
    dist.init_process_group("gloo", rank=rank, world_size=world, timeout=timedelta(seconds=60))
    torch.manual_seed(0)  # same initial weights everywhere (DDP would broadcast rank 0's anyway)
    single = model()
    ddp = DDP(copy.deepcopy(single))
    opt_single = torch.optim.SGD(single.parameters(), lr=0.05)
    opt_ddp = torch.optim.SGD(ddp.parameters(), lr=0.05)
    data = torch.Generator().manual_seed(1)
    worst = 0.0
    for step in range(STEPS):
        x = torch.randn(world * LOCAL_BATCH, 3, 16, 16, generator=data)
        target = torch.randn(world * LOCAL_BATCH, 1, 16, 16, generator=data)
        if step % 2:  # channels_last steps too
            x = x.contiguous(memory_format=torch.channels_last)
        mine = slice(rank * LOCAL_BATCH, (rank + 1) * LOCAL_BATCH)
        opt_ddp.zero_grad()
        nn.functional.mse_loss(ddp(x[mine]), target[mine]).backward()
        opt_single.zero_grad()
        nn.functional.mse_loss(single(x), target).backward()
        for (name, p), q in zip(ddp.module.named_parameters(), single.parameters()):
            scale = q.grad.abs().max().item()
            diff = (p.grad - q.grad).abs().max().item() / scale
            worst = max(worst, diff)
            if diff > TOL:
                print(f"rank {rank} step {step} {name}: gradient differs by {diff:.2e} "
                      f"(relative to max |grad| {scale:.3g})", flush=True)
                sys.exit(1)
        opt_ddp.step()
        opt_single.step()
    # The replicas stayed identical across ranks.
    flat = torch.cat([p.detach().flatten() for p in ddp.module.parameters()])
    gathered = [torch.empty_like(flat) for _ in range(world)]
    dist.all_gather(gathered, flat)
    assert all(torch.equal(gathered[0], g) for g in gathered), "replicas diverged"
    print(f"rank {rank}: {STEPS} steps, largest relative gradient difference {worst:.2e}", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
