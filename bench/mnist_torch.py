#!/usr/bin/env python3
"""PyTorch eager reference for `cargo run --release --example mnist_kernels`.

Same model (784 -> hidden (ReLU) ... -> classes), softmax cross-entropy, Adam (or SGD with
momentum), batch size and epochs as the Rust example, with the whole dataset already on the
GPU: each epoch shuffles with a GPU randperm and takes batches by indexing, so the time
measured is the training step alone (no host-to-device copies, no data loader).

Reads the same IDX files (raw or gzip) as the example:

    python3 bench/mnist_torch.py --data data/mnist
    python3 bench/mnist_torch.py --data /usr/share/datasets/fashion-mnist --epochs 10

Prints each epoch's time, the mean step time (CUDA-synchronised epoch time / steps), the test
accuracy, and a final JSON line for scripts.
"""

import argparse
import gzip
import json
import os
import struct
import sys
import time

import torch
import torch.nn.functional as F

FILES = {
    "train_images": "train-images-idx3-ubyte",
    "train_labels": "train-labels-idx1-ubyte",
    "test_images": "t10k-images-idx3-ubyte",
    "test_labels": "t10k-labels-idx1-ubyte",
}
IMAGES_MAGIC = 0x00000803
LABELS_MAGIC = 0x00000801
DEFAULT_DIRS = ["data/mnist", "/usr/share/datasets/fashion-mnist"]


def read_idx(directory, name, magic):
    """The dimensions and bytes of an IDX file (raw or .gz, detected by its first bytes)."""
    path = os.path.join(directory, name)
    if not os.path.isfile(path):
        path += ".gz"
    if not os.path.isfile(path):
        sys.exit(f"error: {directory}: missing {name} (or {name}.gz)")
    with open(path, "rb") as f:
        data = f.read()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    if len(data) < 4 or struct.unpack(">I", data[:4])[0] != magic:
        sys.exit(f"error: {path}: not an IDX file with magic {magic:#010x}")
    ndim = magic & 0xFF
    header = 4 + 4 * ndim
    dims = struct.unpack(">" + "I" * ndim, data[4:header])
    count = 1
    for d in dims:
        count *= d
    if len(data) - header != count:
        sys.exit(f"error: {path}: header declares {count} bytes of data, {len(data) - header} follow")
    return dims, data[header:]


def load(directory, device, limit):
    """Training and test sets as CUDA tensors: images f32 in [0, 1] (n x pixels), labels i64."""
    sets = []
    for split in ("train", "test"):
        (n, rows, cols), pixels = read_idx(directory, FILES[split + "_images"], IMAGES_MAGIC)
        (m,), labels = read_idx(directory, FILES[split + "_labels"], LABELS_MAGIC)
        if n != m:
            sys.exit(f"error: {directory}: {split} has {n} images but {m} labels")
        x = torch.frombuffer(bytearray(pixels), dtype=torch.uint8).view(n, rows * cols)
        y = torch.frombuffer(bytearray(labels), dtype=torch.uint8).long()
        if limit:
            x, y = x[:limit], y[:limit]
        sets.append((x.to(device).float().div_(255.0), y.to(device)))
    return sets


def find_data(given):
    if given:
        return given
    for directory in DEFAULT_DIRS:
        if all(
            os.path.isfile(os.path.join(directory, f)) or os.path.isfile(os.path.join(directory, f + ".gz"))
            for f in FILES.values()
        ):
            return directory
    sys.exit("error: no data: pass --data DIR with the four MNIST IDX files (see the example's README)")


def mlp(sizes):
    layers = []
    for i in range(len(sizes) - 1):
        layers.append(torch.nn.Linear(sizes[i], sizes[i + 1]))
        if i + 2 < len(sizes):
            layers.append(torch.nn.ReLU())
    return torch.nn.Sequential(*layers)


@torch.no_grad()
def evaluate(model, x, y, batch=10000):
    correct, loss = 0, 0.0
    for i in range(0, x.shape[0], batch):
        logits = model(x[i : i + batch]).float()
        loss += F.cross_entropy(logits, y[i : i + batch], reduction="sum").item()
        correct += (logits.argmax(1) == y[i : i + batch]).sum().item()
    return loss / x.shape[0], correct / x.shape[0]


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", help="folder with the four IDX files (default: data/mnist, then Fashion-MNIST)")
    p.add_argument("--epochs", type=int, default=10)
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--hidden", default="128", help="hidden sizes, comma-separated (512,256)")
    p.add_argument("--optimizer", choices=["adam", "sgd"], default="adam")
    p.add_argument("--momentum", type=float, default=0.9)
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--limit", type=int, default=0, help="use only the first N training and N test samples")
    p.add_argument("--bf16", action="store_true", help="autocast the forward pass to bf16")
    p.add_argument("--fused", action="store_true", help="fused Adam/SGD kernels instead of PyTorch's default")
    args = p.parse_args()

    if not torch.cuda.is_available():
        sys.exit("error: no CUDA device: this reference measures GPU step time")
    device = torch.device("cuda")
    torch.manual_seed(args.seed)
    directory = find_data(args.data)
    (train_x, train_y), (test_x, test_y) = load(directory, device, args.limit)
    n, pixels = train_x.shape
    classes = int(train_y.max().item()) + 1
    sizes = [pixels] + [int(h) for h in args.hidden.split(",")] + [classes]
    model = mlp(sizes).to(device)
    fused = {"fused": True} if args.fused else {}
    if args.optimizer == "adam":
        opt = torch.optim.Adam(model.parameters(), lr=args.lr, **fused)
    else:
        opt = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=args.momentum, **fused)
    steps = (n + args.batch - 1) // args.batch
    print(
        f"PyTorch {torch.__version__} on {torch.cuda.get_device_name(0)}: data {directory}, "
        f"{n} training / {test_x.shape[0]} test samples, MLP {'-'.join(map(str, sizes))}, "
        f"{args.optimizer} lr {args.lr}, batch {args.batch}, {steps} steps per epoch"
        + (", bf16 autocast" if args.bf16 else "")
    )

    epoch_seconds = []
    for epoch in range(1, args.epochs + 1):
        model.train()
        total = torch.zeros((), device=device)
        torch.cuda.synchronize()
        start = time.perf_counter()
        perm = torch.randperm(n, device=device)
        for i in range(steps):
            idx = perm[i * args.batch : (i + 1) * args.batch]
            with torch.autocast("cuda", dtype=torch.bfloat16, enabled=args.bf16):
                logits = model(train_x[idx])
            loss = F.cross_entropy(logits.float(), train_y[idx])
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            # Accumulated on the GPU: reading it every step would synchronise.
            total += loss.detach()
        torch.cuda.synchronize()
        seconds = time.perf_counter() - start
        epoch_seconds.append(seconds)
        model.eval()
        test_loss, test_acc = evaluate(model, test_x, test_y)
        print(
            f"epoch {epoch}/{args.epochs}: train loss {total.item() / steps:.4f} | "
            f"test loss {test_loss:.4f} acc {100 * test_acc:.2f}% | {seconds:.3f} s, "
            f"{n / seconds:.0f} samples/s, {1e3 * seconds / steps:.4f} ms/step"
        )

    # The first epoch includes cuBLAS and allocator warm-up; leave it out when there are others.
    steady = epoch_seconds[1:] if len(epoch_seconds) > 1 else epoch_seconds
    mean_epoch = sum(steady) / len(steady)
    test_loss, test_acc = evaluate(model, test_x, test_y)
    print(f"test accuracy: {100 * test_acc:.2f}%")
    print(
        f"time per epoch: {mean_epoch:.3f} s, {n / mean_epoch:.0f} samples/s, "
        f"{1e3 * mean_epoch / steps:.4f} ms per step"
        + (" (means over epochs 2.., the first includes warm-up)" if len(epoch_seconds) > 1 else "")
    )
    print(
        json.dumps(
            {
                "framework": "pytorch-eager",
                "torch": torch.__version__,
                "device": torch.cuda.get_device_name(0),
                "data": directory,
                "sizes": sizes,
                "optimizer": args.optimizer,
                "fused": args.fused,
                "bf16": args.bf16,
                "batch": args.batch,
                "epochs": args.epochs,
                "steps_per_epoch": steps,
                "epoch_seconds": epoch_seconds,
                "mean_epoch_seconds": mean_epoch,
                "mean_step_ms": 1e3 * mean_epoch / steps,
                "samples_per_second": n / mean_epoch,
                "test_loss": test_loss,
                "test_accuracy": test_acc,
            }
        )
    )


if __name__ == "__main__":
    main()
