"""The halo ops as DISTSPEC answers them, in Python, for one process.

DISTSPEC's C++ kernels ignore nvalchemi's routing tensors (they only check them) and exchange
rows over LAMMPS' swaps: a halo row is a copy of its owner. Here the host's knowledge is an
`owner` map (`owner[i] == i` for owned rows, the owned row it copies for halo rows), and the ops
do what doc/torch_models.md says:

- `halo_forward_static`: owned rows as they are, halo rows from their owners;
- `halo_scatter_correct_static`: halo rows summed into their owners, then refreshed;
- `halo_forward_static_backward`: halo rows summed into their owners, halo rows zero;
- `per_system_reduce`: owned rows summed per system (one process: no all-reduce);
- `per_system_reduce_backward`: owned row i the gradient of system `system_index[i]`, halo
  rows zero;
- `halo_keepalive`: the identity.

Sums of fp32 rows accumulate in fp64; no kernel writes into its input (the graph may still use
it). `HostExchange.install()` puts these kernels in front of whatever the process has
(nvalchemi's own, or nothing: then the ops are defined from their schemas), for the time of a
`with` block. It lets Python run an exported graph the way LAMMPS
will, which checks an export without the C++ side.
"""

from __future__ import annotations

import collections
import contextlib
from typing import Iterator

import torch

from . import ops
from .ops import NAMESPACE, SCHEMAS


class HostExchange:
    """Rows `[owned | halo]` of one process, with the owner of every halo row."""

    def __init__(self, owner: torch.Tensor, n_owned: int):
        owner = torch.as_tensor(owner, dtype=torch.int64)
        if owner.dim() != 1 or n_owned < 0 or n_owned > owner.shape[0]:
            raise ValueError("owner must be a 1-d map over all rows and 0 <= n_owned <= rows")
        if not torch.equal(owner[:n_owned], torch.arange(n_owned)):
            raise ValueError("owned rows must own themselves")
        if owner.numel() > n_owned and (owner[n_owned:].min() < 0 or owner[n_owned:].max() >= n_owned):
            raise ValueError("every halo row's owner must be an owned row")
        self.owner = owner
        self.n_owned = n_owned
        self.calls: collections.Counter[str] = collections.Counter()

    # -- checks: the routing tensors are checked against the host's rows, not used to route --
    def _check(self, name: str, x: torch.Tensor, send_index, recv_dest, recv_real, n_owned) -> None:
        n_rows = self.owner.shape[0]
        if x.shape[0] != n_rows:
            raise RuntimeError(f"{name}: {x.shape[0]} rows, the host has {n_rows}")
        if int(n_owned) != self.n_owned:
            raise RuntimeError(f"{name}: n_owned {int(n_owned)}, the host owns {self.n_owned}")
        if recv_dest.numel() != n_rows - self.n_owned or recv_real.numel() != recv_dest.numel():
            raise RuntimeError(f"{name}: recv_dest/recv_real have {recv_dest.numel()}/"
                               f"{recv_real.numel()} entries, the host has {n_rows - self.n_owned} halo rows")

    def _halo_owners(self, device: torch.device) -> torch.Tensor:
        """The owner of each halo row, on the rows' device (a graph exported for the GPU)."""
        return self.owner[self.n_owned:].to(device)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = x.clone()
        out[self.n_owned:] = x[self._halo_owners(x.device)]
        return out

    def reverse(self, x: torch.Tensor) -> torch.Tensor:
        acc_dtype = torch.float64 if x.dtype in (torch.float32, torch.float16, torch.bfloat16) else x.dtype
        acc = x.to(acc_dtype, copy=True)  # never write into the op's input
        acc[:self.n_owned] = acc[:self.n_owned].index_add(0, self._halo_owners(x.device), acc[self.n_owned:])
        acc[self.n_owned:] = 0
        return acc.to(x.dtype)

    # -- kernels --
    def halo_forward_static(self, x, si, rd, rr, no, world_size):
        self._check("halo_forward_static", x, si, rd, rr, no)
        self.calls["halo_forward_static"] += 1
        return self.forward(x)

    def halo_scatter_correct_static(self, x, si, rd, rr, no, world_size):
        self._check("halo_scatter_correct_static", x, si, rd, rr, no)
        self.calls["halo_scatter_correct_static"] += 1
        return self.forward(self.reverse(x))

    def halo_forward_static_backward(self, g, si, rd, rr, no, world_size):
        self._check("halo_forward_static_backward", g, si, rd, rr, no)
        self.calls["halo_forward_static_backward"] += 1
        return self.reverse(g)

    def per_system_reduce(self, local_vals, system_index, n_systems):
        self.calls["per_system_reduce"] += 1
        n = min(local_vals.shape[0], self.n_owned)
        acc_dtype = torch.float64 if local_vals.dtype == torch.float32 else local_vals.dtype
        out = torch.zeros((n_systems,) + tuple(local_vals.shape[1:]), dtype=acc_dtype, device=local_vals.device)
        out.index_add_(0, system_index[:n].long(), local_vals[:n].to(acc_dtype))
        return out.to(local_vals.dtype)

    def per_system_reduce_backward(self, grad_out, system_index):
        self.calls["per_system_reduce_backward"] += 1
        n = min(system_index.shape[0], self.n_owned)
        out = grad_out.new_zeros((system_index.shape[0],) + tuple(grad_out.shape[1:]))
        out[:n] = grad_out.index_select(0, system_index[:n].long())
        return out

    def halo_keepalive(self, x, si, rd, rr, no):
        self.calls["halo_keepalive"] += 1
        return x.clone()

    @contextlib.contextmanager
    def install(self, device: str = "cpu") -> Iterator["HostExchange"]:
        """Answer the ops with this host's kernels inside the block, for rows on the cpu and, with
        device "cuda", on the GPU too (a graph exported for it calls the ops with device rows)."""
        define_missing_ops()
        impl = torch.library.Library(NAMESPACE, "IMPL")
        for name in SCHEMAS:
            for key in ("CPU", "CUDA") if device == "cuda" else ("CPU",):
                impl.impl(name, getattr(self, name), key)
        try:
            yield self
        finally:
            impl._destroy()


_schema_lib: torch.library.Library | None = None


def define_missing_ops() -> None:
    """Define, for the life of the process, the ops that nothing has registered yet.

    In a process without nvalchemi this defines its ops from their schemas, as the plugin's C++
    library does (a graph file can only be loaded once they exist); nvalchemi's modules cannot
    be imported after that, so a process that uses them imports them first
    (ops.import_nvalchemi_ops()).
    """
    global _schema_lib
    ops.define_backward_op()
    namespace = getattr(torch.ops, NAMESPACE)
    missing = [name for name in SCHEMAS if not hasattr(namespace, name)]
    if missing:
        if _schema_lib is None:
            _schema_lib = torch.library.Library(NAMESPACE, "FRAGMENT")
        for name in missing:
            _schema_lib.define(name + SCHEMAS[name])
