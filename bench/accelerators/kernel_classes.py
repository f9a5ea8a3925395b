#!/usr/bin/env python3
"""Share of GPU time by kernel class, from Nsight Systems' cuda_gpu_kern_sum CSV.

    kernel_classes.py KERNELS.csv [--top N]

Prints a Markdown table: each class's share of the summed kernel time, its kernel count and its
largest kernel, then the largest kernels no rule matched (the classes must cover what matters:
an unmatched row is named, never folded into 'rest' unseen).
"""
import argparse
import csv
import re
import sys

# First match wins: the more specific rules come first.
RULES = [
    ("MACE convolution backward", r"mace::.*backward_kernel.*SplineConvolution"),
    ("MACE convolution forward", r"mace::.*forward_kernel.*SplineConvolution"),
    ("MACE symmetric contraction", r"mace::.*(SymmetricContraction|symmetric)"),
    ("MACE element linears", r"mace::.*(ElementLinear|product_kernel)"),
    ("MACE (other)", r"distspec::models::mace::"),
    ("DISTSPEC halo and graph", r"distspec::"),
    ("OpenEquivariance convolution backward", r"(?i)^(void )?(conv_)?(double_)?backward|fixup_backward|jit_conv.*backward"),
    ("OpenEquivariance convolution forward", r"(?i)^(void )?(conv_)?forward|fixup_forward|jit_conv.*forward"),
    ("cuBLAS/CUTLASS matrix products", r"(?i)gemm|cutlass|cublas|sm90_xmma|Kernel2|splitKreduce|gemv"),
    ("TorchInductor fused (Triton)", r"^triton_"),
    ("TorchScript fused", r"(?i)fused|CudaCodeGen|nvfuser"),
    ("torch scatter/index/sort", r"(?i)scatter|index_|indexSelect|gather|radix|sort|cub::|unique|nonzero|where"),
    ("torch reductions", r"(?i)reduce_kernel|reduce|cumsum|scan"),
    ("torch elementwise", r"(?i)elementwise|vectorized|unrolled|CatArray|copy_kernel|fill|launch_clamp"),
]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("csv")
    parser.add_argument("--top", type=int, default=8, help="unmatched kernels listed (8)")
    args = parser.parse_args()
    with open(args.csv, newline="") as f:
        rows = [(int(float(r["Total Time (ns)"])), int(r["Instances"]), r["Name"]) for r in csv.DictReader(f)]
    total = sum(t for t, _, _ in rows)
    if not total:
        print(f"kernel_classes: {args.csv} holds no kernel time", file=sys.stderr)
        return 1
    classes: dict[str, list] = {}
    unmatched = []
    for time, count, name in rows:
        label = next((label for label, rule in RULES if re.search(rule, name)), None)
        if label is None:
            unmatched.append((time, count, name))
            label = "unmatched"
        entry = classes.setdefault(label, [0, 0, name, 0])
        entry[0] += time
        entry[1] += count
        if time > entry[3]:
            entry[2], entry[3] = name, time
    print(f"GPU kernel time {total / 1e6:.2f} ms, {len(rows)} kernels ({args.csv})\n")
    print("| class | share | ms | launches | largest kernel |")
    print("|---|---:|---:|---:|---|")
    for label, (time, count, name, _) in sorted(classes.items(), key=lambda kv: -kv[1][0]):
        print(f"| {label} | {100 * time / total:.1f} % | {time / 1e6:.2f} | {count} | `{name[:90]}` |")
    if unmatched:
        print("\nUnmatched kernels:\n")
        for time, count, name in sorted(unmatched, reverse=True)[:args.top]:
            print(f"- {100 * time / total:.1f} % ({count}): `{name[:160]}`")
    return 0


if __name__ == "__main__":
    sys.exit(main())
