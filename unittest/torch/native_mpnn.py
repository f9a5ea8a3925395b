"""The built-in `mpnn` (lib/models/mpnn) rewritten in PyTorch: the native backend's twin.

Reads a native model file (`"architecture": "mpnn"`, e.g. potentials/cu_mpnn_L2.json) and
computes, in fp64 and plain torch ops, the energy the native model computes with the same
parameters: a SchNet-style network (Schütt et al., J. Chem. Phys. 148, 241722 (2018)) on a
Morse pair baseline. Exported with tools/distspec-export it runs under `pair_style distspec`
as a torch model, so the two backends check each other on the same deck (unittest/torch/cases/
twin_*.json). Written from the math in lib/models/mpnn/mpnn.h and the tensor ops' comments,
calling none of DISTSPEC's code:

  h0_i         = embedding[species_i]
  layer l:       w_ij = (rbf(r_ij) W_l + b_l) fc(r_ij)              fc cosine cutoff at the cutoff
                 h_{l+1}[i] = h_l[i] + MLP_l(sum_j h_l[j] * w_ij)   on owned (receiver) rows
  e_i          = MLP_out(h_L[i]) + E_ref[species_i] + 1/2 sum_j Morse(r_ij) s(r_ij)
  rbf_k(r)     = exp(-(r - mu_k)^2 / (2 width^2)), mu_k evenly from start to stop (gaussian), or
                 sqrt(2 / cutoff) sin(k pi r / cutoff) / r, k = 1..K (bessel)
  MLP(x)       = act(x W0 + b0) W1 + b1,  act = shifted softplus (softplus(x) - ln 2) or silu
  s(r)         = cosine switch from 1 at switch_inner to 0 at the cutoff

Halo refreshes where the native model's spec (potentials/specs/mpnn_halo.json, policy halo,
gather_mode halo_read) has them: h0 is valid on halo rows (species are promoted), so layer 1
reads it as it is; before each later layer reads neighbours' h it calls
`halo_forward_static` (whose backward, a reverse exchange, the exporter supplies). The sums
over a receiver's edges are complete where they are taken, so no scatter correction is made,
as in the native model. Edges beyond the cutoff (the neighbour list's skin) contribute exactly
zero, value and slope, as the native model's dropping them does.

Node work runs on the owned rows only (`owned_rows`, the default): the sums over a receiver's
edges, the updates and the readout; halo rows of h come from the refresh, which reads owned rows
only. `owned_rows=False` computes every row as first written (halo rows keep h0 until
refreshed); both give the same energy.

forward(positions, species, edge_index, n_owned, send_index, recv_dest, recv_real[, edge_shift]) ->
atomic energies [n_owned] ([N] without owned_rows) (doc/torch_models.md, contract 1; edge_shift, added to each edge vector, is
what the exporter differentiates for the per-atom virial). Importing this module registers
nvalchemi's ops.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import torch

import nvalchemi.distributed._core.particle_halo  # noqa: F401  (registers torch.ops.nvalchemi.*)

LN2 = math.log(2.0)


def _tensor(values) -> torch.Tensor:
    return torch.tensor(values, dtype=torch.float64)


class NativeMPNN(torch.nn.Module):
    """The network of a native `mpnn` model file; weights are buffers (forces need no
    parameter gradients)."""

    def __init__(self, model_file: str | Path, owned_rows: bool = True):
        super().__init__()
        self.owned_rows = owned_rows  # False: every update and the readout on every row (as first written)
        model = json.loads(Path(model_file).read_text())
        if model.get("architecture") != "mpnn":
            raise ValueError(f"{model_file}: architecture {model.get('architecture')!r}, expected 'mpnn'")
        p = model["parameters"]
        if p.get("precision", "fp64") != "fp64":
            raise ValueError(f"{model_file}: the twin runs in fp64, the model file asks for {p['precision']}")
        self.elements = list(model["elements"])
        self.cutoff = float(model["cutoff"])
        self.units = model["units"]
        self.silu = p["activation"] == "silu"
        basis = p["radial_basis"]
        self.bessel = basis["kind"] == "bessel"
        k = int(basis["size"])
        if self.bessel:
            self.register_buffer("frequencies", torch.arange(1, k + 1, dtype=torch.float64) * (math.pi / self.cutoff))
        else:
            start, stop = float(basis["start"]), float(basis["stop"])
            centres = [start + (stop - start) * i / (k - 1) if k > 1 else start for i in range(k)]
            self.register_buffer("centres", _tensor(centres))
            self.inv_width2 = 1.0 / (float(basis["width"]) ** 2)

        self.register_buffer("embedding", _tensor([p["embedding"][e] for e in self.elements]))
        self.message_passing_layers = len(p["layers"])
        for i, layer in enumerate(p["layers"]):
            self._dense(f"filter{i}", layer["filter"])
            self._dense(f"update{i}_0", layer["update"][0])
            self._dense(f"update{i}_1", layer["update"][1])
        self._dense("readout_0", p["readout"][0])
        self._dense("readout_1", p["readout"][1])
        ref = p.get("reference_energy", {})
        self.register_buffer("reference", _tensor([float(ref.get(e, 0.0)) for e in self.elements]))

        # Morse table by species pair a * n + b (every pair listed once, both orders filled).
        base = p["baseline"]
        n = len(self.elements)
        table = [[0.0, 0.0, 0.0] for _ in range(n * n)]
        for pair in base["pairs"]:
            a, b = (self.elements.index(e) for e in pair["elements"])
            table[a * n + b] = table[b * n + a] = [float(pair["D"]), float(pair["alpha"]), float(pair["r0"])]
        self.register_buffer("morse", _tensor(table))
        self.switch_inner = float(base["switch_inner"])

    def _dense(self, name: str, d: dict) -> None:
        """y = x W + b with W [in][out], as the model file stores it."""
        self.register_buffer(name + "_w", _tensor(d["weight"]))
        self.register_buffer(name + "_b", _tensor(d["bias"]))

    def _linear(self, x: torch.Tensor, name: str) -> torch.Tensor:
        return x @ getattr(self, name + "_w") + getattr(self, name + "_b")

    def _activation(self, x: torch.Tensor) -> torch.Tensor:
        if self.silu:
            return x * torch.sigmoid(x)
        # softplus(x) = max(x, 0) + log1p(exp(-|x|)): exact for large x, where torch's softplus
        # switches to x (threshold 20) and would differ by ~1e-9.
        return torch.clamp(x, min=0.0) + torch.log1p(torch.exp(-x.abs())) - LN2

    def _mlp(self, x: torch.Tensor, name: str) -> torch.Tensor:
        return self._linear(self._activation(self._linear(x, name + "_0")), name + "_1")

    def _cosine(self, r: torch.Tensor, inner: float) -> torch.Tensor:
        """1 up to inner, (cos(pi (r - inner) / (cutoff - inner)) + 1) / 2 to the cutoff, 0 beyond."""
        t = ((r - inner) * (math.pi / (self.cutoff - inner))).clamp(0.0, math.pi)  # slope 0 outside
        return 0.5 * (torch.cos(t) + 1.0)

    def _basis(self, r: torch.Tensor) -> torch.Tensor:
        if self.bessel:
            x = r.unsqueeze(1)
            return math.sqrt(2.0 / self.cutoff) * torch.sin(self.frequencies * x) / x
        return torch.exp(-0.5 * (r.unsqueeze(1) - self.centres).square() * self.inv_width2)

    def forward(self, positions, species, edge_index, n_owned, send_index, recv_dest, recv_real, edge_shift=None):
        sender, receiver = edge_index[0], edge_index[1]
        n_rows = positions.shape[0]
        vec = positions.index_select(0, sender) - positions.index_select(0, receiver)
        if edge_shift is not None:  # the exporter's zero displacement: dE/d(edge vector), the per-atom virial
            vec = vec + edge_shift
        r = vec.square().sum(-1).sqrt()
        fc = self._cosine(r, 0.0)
        rbf = self._basis(r)

        # Rows a result is computed on: the owned ones (their count by shape, recv_dest =
        # arange(n_owned, N)), or every row without owned_rows. Receivers are owned rows, so the
        # sums over edges and the updates live there; each later layer refreshes the halo rows
        # from the owners before a gather reads them.
        n_halo = recv_dest.shape[0]
        n = n_rows - n_halo if self.owned_rows else n_rows

        def owned(x):
            return x.split([n, n_halo])[0] if self.owned_rows else x

        # Morse baseline, half of each pair on its receiver (the reverse edge brings the other half).
        n_species = self.embedding.shape[0]
        m = self.morse.index_select(0, species.index_select(0, receiver) * n_species + species.index_select(0, sender))
        x = torch.exp(-m[:, 1] * (r - m[:, 2]))
        pair = 0.5 * m[:, 0] * (x * x - 2.0 * x) * self._cosine(r, self.switch_inner)
        baseline = torch.zeros(n, dtype=positions.dtype, device=positions.device).index_add(0, receiver, pair)

        routing = (send_index, recv_dest, recv_real, n_owned, 1)
        h = self.embedding.index_select(0, species)
        for i in range(self.message_passing_layers):
            if i == 0:
                rows = h  # every row's h0 comes from its species: valid on halo rows already
            elif self.owned_rows:  # owned rows, then zero halo rows, which the refresh overwrites
                rows = torch.ops.nvalchemi.halo_forward_static(torch.cat([h, h.new_zeros(n_halo, h.shape[1])]),
                                                               *routing)
            else:
                rows = torch.ops.nvalchemi.halo_forward_static(h, *routing)
            filt = self._linear(rbf, f"filter{i}") * fc.unsqueeze(1)
            summed = h.new_zeros(n, h.shape[1]).index_add(0, receiver, rows.index_select(0, sender) * filt)
            update = self._mlp(summed, f"update{i}")
            if self.owned_rows:
                h = owned(rows) + update
            else:  # halo rows keep h0 until refreshed
                owned_mask = (torch.arange(n_rows, device=positions.device) < n_owned).unsqueeze(1)
                h = rows + torch.where(owned_mask, update, torch.zeros_like(h))

        return self._mlp(h, "readout").squeeze(1) + baseline + self.reference.index_select(0, owned(species))


def build(model_file: str, owned_rows: bool = True) -> NativeMPNN:
    """The factory distspec-export's --module takes (`native_mpnn.py:build`)."""
    return NativeMPNN(model_file, owned_rows)
