#!/usr/bin/env python3
"""PyTorch DistributedDataParallel reference for `mnist_kernels --devices N`.

The same model, loss, optimizer and sharding as the Rust example's data-parallel training:
every rank holds the model, takes its `batch / world_size` samples of every global batch (the
same shuffle on every rank), and DDP averages the gradients over NCCL in 25 MiB buckets
overlapped with the backward pass. The whole dataset sits on every GPU, so the time measured
is the training step alone. Start it with torchrun, one process per GPU:

    NCCL_NVLS_ENABLE=0 torchrun --nproc-per-node 2 bench/mnist_torch_ddp.py \\
        --hidden 4096,4096 --batch 4096 --epochs 3

NVLink multicast stays off (NCCL_NVLS_ENABLE=0, set here too before NCCL starts): see
docs/MULTI_GPU.md. Rank 0 prints each epoch and a line for scaling tables:

    throughput: 123456 samples/s on 2 device(s), global batch 4096, hidden [4096, 4096]
"""

import argparse
import os
import sys
import time

os.environ.setdefault("NCCL_NVLS_ENABLE", "0")

import torch
import torch.distributed as dist
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mnist_torch import evaluate, find_data, load, mlp  # noqa: E402


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", help="folder with the four IDX files (default: data/mnist, then Fashion-MNIST)")
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--batch", type=int, default=4096, help="global batch, a multiple of the ranks")
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--hidden", default="4096,4096", help="hidden sizes, comma-separated")
    p.add_argument("--seed", type=int, default=42)
    args = p.parse_args()

    if os.environ.get("NCCL_NVLS_ENABLE") != "0":
        sys.exit("error: NCCL_NVLS_ENABLE must be 0 (NVLink multicast stays off; see docs/MULTI_GPU.md)")
    if "RANK" not in os.environ:
        sys.exit("error: start this with torchrun (or scripts/launch), one process per GPU")
    dist.init_process_group("nccl")
    rank, world = dist.get_rank(), dist.get_world_size()
    local_rank = int(os.environ.get("LOCAL_RANK", rank))
    torch.cuda.set_device(local_rank)
    device = torch.device("cuda", local_rank)
    if args.batch % world:
        sys.exit(f"error: a global batch of {args.batch} does not split over {world} ranks")
    local = args.batch // world

    torch.manual_seed(args.seed)
    (train_x, train_y), (test_x, test_y) = load(find_data(args.data), device, 0)
    n, pixels = train_x.shape
    classes = int(train_y.max().item()) + 1
    sizes = [pixels] + [int(h) for h in args.hidden.split(",")] + [classes]
    # DDP broadcasts rank 0's initial weights to every rank.
    model = torch.nn.parallel.DistributedDataParallel(mlp(sizes).to(device), device_ids=[local_rank])
    opt = torch.optim.Adam(model.parameters(), lr=args.lr)
    steps = n // args.batch
    if rank == 0:
        print(
            f"PyTorch {torch.__version__} DDP on {world} x {torch.cuda.get_device_name(local_rank)}: "
            f"MLP {'-'.join(map(str, sizes))}, global batch {args.batch} ({local} per rank), "
            f"{steps} steps per epoch"
        )

    def step(idx):
        loss = F.cross_entropy(model(train_x[idx]), train_y[idx])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        return loss.detach()

    # A warm-up step (cuBLAS, NCCL's first collective), as the Rust example takes one.
    step(torch.arange(local, device=device))
    shuffle = torch.Generator(device=device)
    shuffle.manual_seed(args.seed)
    epoch_seconds = []
    for epoch in range(1, args.epochs + 1):
        model.train()
        total = torch.zeros((), device=device)
        torch.cuda.synchronize()
        start = time.perf_counter()
        # The same generator state on every rank, so the same permutation.
        perm = torch.randperm(n, device=device, generator=shuffle)
        for i in range(steps):
            total += step(perm[i * args.batch + rank * local :][:local])
        torch.cuda.synchronize()
        seconds = time.perf_counter() - start
        epoch_seconds.append(seconds)
        if rank == 0:
            model.eval()
            test_loss, test_acc = evaluate(model.module, test_x, test_y)
            print(
                f"epoch {epoch}/{args.epochs}: rank 0 train loss {total.item() / steps:.4f} | "
                f"test loss {test_loss:.4f} acc {100 * test_acc:.2f}% | {seconds:.3f} s, "
                f"{steps * args.batch / seconds:.0f} samples/s"
            )
    # The first epoch still includes the caching allocator's and cuBLAS's warm-up (0.2 s
    # against 0.14 on one H200); leave it out when there are others, as mnist_torch.py does.
    steady = epoch_seconds[1:] if len(epoch_seconds) > 1 else epoch_seconds
    mean = sum(steady) / len(steady)
    if rank == 0:
        print(
            f"throughput: {steps * args.batch / mean:.0f} samples/s on {world} device(s), "
            f"global batch {args.batch}, hidden {[int(h) for h in args.hidden.split(',')]}"
            + (" (epochs 2..)" if len(epoch_seconds) > 1 else "")
        )
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
