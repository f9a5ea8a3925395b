"""A small message-passing potential in PyTorch for the torch backend's tests.

Random weights from a seed; a Morse pair baseline (Cu's parameters, L. A. Girifalco and V. G.
Weizer, Phys. Rev. 114, 687 (1959)) plus a message-passing network of 2 or 4 layers, 12
features, a species embedding and a smooth cosine cutoff. It predicts nothing; the baseline
only keeps an fcc crystal together, so that MD with it stays sane.

Its layers use both halo patterns of nvalchemi, each where the result depends on it:

- every layer scatters its messages into the receivers (index_add) and calls
  `halo_scatter_correct_static` on the sums, which also refreshes their halo rows: so the node
  features h stay right on halo rows, and a `scatter` layer gathers h by sender directly;
- a `refresh` layer gathers h + tanh(density W) instead, where the density (a sum of radial
  functions over the edges, not corrected) is right on owned rows only: it calls
  `halo_forward_static` on it before gathering by sender.

L2 = (refresh, scatter), L4 = (refresh, scatter, refresh, scatter). A graph whose refresh or
whose correction (or the backward of either) were wrong gives wrong forces on these.

With `owned_rows` (the default) a result is computed on the owned rows only wherever no gather
by sender reads its halo rows: the mix of a `refresh` layer (the refresh overwrites its halo
rows), the last layer's update and the readout. The owned count comes from shapes (N -
len(recv_dest)), so the traced graph's sizes stay symbolic. `owned_rows=False` computes every
row, as the eager reference does (reference.py): the two must agree.

forward(positions, species, edge_index, n_owned, send_index, recv_dest, recv_real[, edge_shift]) ->
atomic energies [n_owned] ([N] without owned_rows) (doc/torch_models.md): rows [owned | halo], edge_index row 0 the sender,
row 1 the (owned) receiver; edge_shift [E, 3], added to each edge vector, is what the exporter
differentiates for the per-atom virial. Importing this module registers nvalchemi's ops.
"""

from __future__ import annotations

import math

import torch

try:
    import nvalchemi.distributed._core.particle_halo  # noqa: F401  (registers torch.ops.nvalchemi.*)
except ImportError:  # the exporter defines the ops itself where nvalchemi does not import
    pass

MORSE = {"D": 0.3429, "alpha": 1.3588, "r0": 2.866}  # eV, 1/Angstrom, Angstrom


class ToyMPNN(torch.nn.Module):
    def __init__(self, n_species: int = 2, layers: int = 2, width: int = 12, n_radial: int = 8,
                 cutoff: float = 4.5, seed: int = 0, scale: float = 0.05, world_size: int = 1,
                 owned_rows: bool = True):
        super().__init__()
        if layers not in (2, 4):
            raise ValueError("the toy model has 2 or 4 layers")
        gen = torch.Generator().manual_seed(seed)

        def randn(*shape, std=1.0):
            return torch.nn.Parameter(torch.randn(*shape, generator=gen, dtype=torch.float64) * std)

        self.cutoff = float(cutoff)
        self.owned_rows = owned_rows  # False: every update on every row (the reference's, reference.py)
        self.world_size = world_size
        self.scale = scale
        self.message_passing_layers = layers
        self.patterns = ("refresh", "scatter") * (layers // 2)
        self.embedding = randn(n_species, width)
        self.register_buffer("centers", torch.linspace(0.0, cutoff, n_radial, dtype=torch.float64))
        self.gamma = (n_radial / cutoff) ** 2
        self.w_radial = torch.nn.ParameterList(randn(n_radial, width, std=n_radial ** -0.5) for _ in range(layers))
        self.w_message = torch.nn.ParameterList(randn(width, width, std=width ** -0.5) for _ in range(layers))
        self.w_update = torch.nn.ParameterList(randn(width, width, std=width ** -0.5) for _ in range(layers))
        self.b_update = torch.nn.ParameterList(randn(width, std=0.1) for _ in range(layers))
        self.w_density = torch.nn.ParameterList(randn(n_radial, width, std=n_radial ** -0.5) for _ in range(layers))
        self.w_out = randn(width, width, std=width ** -0.5)
        self.v_out = randn(width, std=width ** -0.5)
        self.shift = randn(n_species, std=0.1)

    def forward(self, positions, species, edge_index, n_owned, send_index, recv_dest, recv_real, edge_shift=None):
        sender, receiver = edge_index[0], edge_index[1]
        vec = positions.index_select(0, sender) - positions.index_select(0, receiver)
        if edge_shift is not None:  # the exporter's zero displacement: dE/d(edge vector), the per-atom virial
            vec = vec + edge_shift
        r = vec.square().sum(-1).sqrt()
        inside = r < self.cutoff
        fc = torch.where(inside, 0.5 * (torch.cos(r * (math.pi / self.cutoff)) + 1.0), torch.zeros_like(r))
        # Rows that a result is computed on: N, or with owned_rows the owned ones (their count by
        # shape, recv_dest = arange(n_owned, N)), wherever no gather by sender reads the result.
        n_rows, n_halo = positions.shape[0], recv_dest.shape[0]
        n = n_rows - n_halo if self.owned_rows else n_rows

        def owned(x):
            return x.split([n, n_halo])[0] if self.owned_rows else x

        def all_rows(x):  # owned rows and zero halo rows, for a halo op that refreshes them
            return torch.cat([x, x.new_zeros((n_halo, *x.shape[1:]))]) if self.owned_rows else x

        # Pair baseline: half of each pair on its receiver (the reverse edge brings the other half).
        m = MORSE
        x = torch.exp(-m["alpha"] * (r - m["r0"]))
        pair = 0.5 * m["D"] * (x * x - 2.0 * x) * fc
        baseline = torch.zeros(n, dtype=positions.dtype, device=positions.device)
        baseline = baseline.index_add(0, receiver, pair)

        radial = torch.exp(-self.gamma * (r.unsqueeze(1) - self.centers).square()) * fc.unsqueeze(1)
        density = torch.zeros(n, radial.shape[1], dtype=positions.dtype, device=positions.device)
        density = density.index_add(0, receiver, radial)  # right on owned rows only
        h = self.embedding.index_select(0, species)
        routing = (send_index, recv_dest, recv_real, n_owned, self.world_size)
        for layer, pattern in enumerate(self.patterns):
            rows = h
            if pattern == "refresh":
                # halo rows of the mix are the refresh's: computed on owned rows only
                mixed = owned(h) + torch.tanh(density @ self.w_density[layer])
                rows = torch.ops.nvalchemi.halo_forward_static(all_rows(mixed), *routing)
            message = torch.tanh(rows.index_select(0, sender) @ self.w_message[layer]) * (radial @ self.w_radial[layer])
            summed = torch.zeros_like(h).index_add(0, receiver, message)
            summed = torch.ops.nvalchemi.halo_scatter_correct_static(summed, *routing)
            # The corrected sums are right on halo rows too, and a `scatter` layer gathers h by
            # sender without a refresh: h is updated on every row, except after the last layer.
            if layer == len(self.patterns) - 1:
                h, summed = owned(h), owned(summed)
            h = h + torch.tanh(summed @ self.w_update[layer] + self.b_update[layer])
        network = torch.tanh(h @ self.w_out) @ self.v_out + self.shift.index_select(0, owned(species))
        return baseline + self.scale * network


def build(layers: int = 2, n_species: int = 2, cutoff: float = 4.5, seed: int = 0, owned_rows: bool = True) -> ToyMPNN:
    """The factory distspec-export's --module takes (`toy_mpnn.py:build`)."""
    return ToyMPNN(n_species=n_species, layers=layers, cutoff=cutoff, seed=seed, owned_rows=owned_rows)
