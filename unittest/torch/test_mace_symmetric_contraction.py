#!/usr/bin/env python3
"""distspec_mace::symmetric_contraction against mace-torch's own SymmetricContraction, ctest
torch.mace_symmetric_contraction.

mace's modules built as mace builds them (random weights, mace's default reduced Clebsch-Gordan
basis unless said):

- MACE-MP-0 medium's two product blocks (bench/accelerators/mace_mp0_medium.py: 89 elements,
  features 128x(0e+1o+2e+3o) in, 128x0e+128x1o and 128x0e out, correlation 3);
- hidden irreps up to L = 3: 32x(0e+1o+2e+3o) in and out, correlation 1, 2 and 3, 10 elements;
- MACE-MP-0 medium's first product with e3nn's full Clebsch-Gordan basis (use_reduced_cg=False),
  whose U tensors carry rounding-sized entries.

On rows of 3 exported elements (random rows of the table, in random order), random x: the op's
value and its gradient with respect to x (torch.autograd.grad with a random cotangent) equal mace's
module given the one-hot of each row's element, relative to their largest magnitude: fp64 within
1e-12, fp32 (mace's module and ours in fp32) within 1e-5; the backward op equals central
differences of the forward (gradcheck, the L = 3 module at correlation 3). The op traced by make_fx with symbolic
sizes (the fake implementations) gives the same gradient, with the backward op in the graph. Bad
input gives the op's message: a species outside the exported elements, int32 species, x of the
wrong shape or channel count, a second derivative, a module that is not mace's. The CPU time of
the op's and mace's forward + backward on 2000 nodes is printed (not checked).

  test_mace_symmetric_contraction.py [--library LIBRARY] [--python PYTHON] [--no-timing]
"""

from __future__ import annotations

import sys

import mace_op_testing as testing
from mace_op_testing import Results, expect_error

ROWS_PER_ELEMENT = 40


def inputs(module, n_elements: int, dtype, gen):
    """Random x [n, C, D] and species: ROWS_PER_ELEMENT rows of each element, shuffled."""
    import torch  # noqa: PLC0415

    first = module.contractions[0]
    species = torch.arange(n_elements).repeat(ROWS_PER_ELEMENT)
    species = species[torch.randperm(species.shape[0], generator=gen)]
    x = torch.randn(species.shape[0], first.num_features, first.coupling_irreps.dim, generator=gen,
                    dtype=torch.float64)
    return x.to(dtype), species


def compare(results: Results, label: str, module, width: int, gen) -> None:
    """Ours against `module` (mace's, fp64; turned fp32 in place for the fp32 half)."""
    from distspec_export.mace_kernels.symmetric_contraction import SymmetricContraction  # noqa: PLC0415

    testing.compare_with_mace(results, label, "mace's", module, width,
                              lambda rows, dtype: SymmetricContraction.from_mace(module, rows, dtype),
                              lambda n_elements, dtype, gen: inputs(module, n_elements, dtype, gen), gen)


def compare_traced(results: Results, module, width: int, gen) -> None:
    """make_fx with symbolic sizes (the fake implementations), forward and gradient, run back."""
    import torch  # noqa: PLC0415
    from distspec_export.mace_kernels.symmetric_contraction import SymmetricContraction  # noqa: PLC0415

    rows = [width - 1, 0]
    ours = SymmetricContraction.from_mace(module, rows, torch.float64)
    x, species = inputs(module, len(rows), torch.float64, gen)
    testing.check_traced(results, "symmetric_contraction", ours, x, species)


def compare_finite_differences(results: Results, module, width: int, gen) -> None:
    """The backward op against central differences of the forward op (torch.autograd.gradcheck, fp64)."""
    import torch  # noqa: PLC0415
    from distspec_export.mace_kernels.symmetric_contraction import SymmetricContraction  # noqa: PLC0415

    ours = SymmetricContraction.from_mace(module, [1, width - 1], torch.float64)
    x, species = inputs(module, 2, torch.float64, gen)
    testing.check_gradcheck(results, ours, x[:3], species[:3])


def check_errors(results: Results, module, width: int) -> None:
    import torch  # noqa: PLC0415
    from distspec_export.mace_kernels.symmetric_contraction import SymmetricContraction  # noqa: PLC0415
    from distspec_export.trace import ExportError  # noqa: PLC0415

    ours = SymmetricContraction.from_mace(module, [3, 1, 4], torch.float64)
    gen = torch.Generator().manual_seed(5)
    x, species = inputs(module, 3, torch.float64, gen)
    op = "distspec_mace::symmetric_contraction"
    expect_error(results, "species outside the exported elements", lambda: ours(x, species + 1), op,
                 "species holds values in [1, 3], outside [0, 3)")
    expect_error(results, "int32 species", lambda: ours(x, species.to(torch.int32)), op, "species must be int64")
    expect_error(results, "species of another length", lambda: ours(x, species[1:]), op, "species must be int64 [n]")
    expect_error(results, "x flat", lambda: ours(x.reshape(x.shape[0], -1), species), op, "x must be [n, channels, D]")
    expect_error(results, "x of another channel count", lambda: ours(x[:, 1:], species), op, "coefficients must be")
    expect_error(results, "x float32, tables float64", lambda: ours(x.float(), species), op,
                 "coefficients must be Float")
    expect_error(results, "second derivative", testing.second_derivative(lambda xg: ours(xg, species), x),
                 "symmetric_contraction_backward", "second derivatives are not implemented")
    expect_error(results, "a module that is not mace's", lambda: SymmetricContraction.from_mace(
        torch.nn.Linear(2, 2), [0], torch.float64), "is not mace's e3nn SymmetricContraction", kind=ExportError)
    expect_error(results, "element rows outside the table", lambda: SymmetricContraction.from_mace(
        module, [width], torch.float64), f"{width}-wide one-hot", kind=ExportError)


def timing(module, width: int) -> None:
    """CPU forward + backward, ours against mace's module as is and kept to the 3 elements
    (module_ops' fallback, element_linears' fold)."""
    import torch  # noqa: PLC0415
    from distspec_export.mace_kernels import module_ops  # noqa: PLC0415
    from distspec_export.mace_kernels.symmetric_contraction import SymmetricContraction  # noqa: PLC0415

    rows = [5, 13, 28]
    gen = torch.Generator().manual_seed(9)

    def calls_at(dtype):
        ours = SymmetricContraction.from_mace(module, rows, dtype)
        folded = module_ops.ModuleSymmetricContraction(module, rows, dtype)
        first = module.contractions[0]
        species, x, y = testing.timing_inputs(rows, width, (first.num_features, first.coupling_irreps.dim), dtype,
                                              gen)
        return x, {"ours": lambda xg: ours(xg, species), "mace, 3 elements": lambda xg: folded(xg, species),
                   "mace, 89 elements": lambda xg: module(xg, y)}

    for precision, times in testing.cpu_times(module, calls_at, lambda name: 3 if name == "ours" else 1):
        print(testing.timing_line(precision, times) +
              f"; ours {times['mace, 3 elements'] / times['ours']:.0f}x faster than mace's kept to 3 elements")


def checks(results: Results, argv: list[str]) -> None:
    import torch  # noqa: PLC0415
    from e3nn import o3  # noqa: PLC0415
    from mace.modules.symmetric_contraction import SymmetricContraction as MaceContraction  # noqa: PLC0415

    import mace_mp0_medium  # noqa: PLC0415
    from distspec_export.precision import default_dtype  # noqa: PLC0415

    gen = torch.Generator().manual_seed(0)
    model = mace_mp0_medium.build(dtype="float64")
    width = len(mace_mp0_medium.ELEMENTS)
    for k, product in enumerate(model.products):
        compare(results, f"MACE-MP-0 medium product {k} ({product.symmetric_contractions.irreps_out})",
                product.symmetric_contractions, width, gen)

    def built(irreps_in: str, irreps_out: str, correlation: int, elements: int, reduced: bool = True):
        # mace builds its U tensors in torch's default dtype.
        with default_dtype(torch.float64):
            torch.manual_seed(correlation)
            return MaceContraction(o3.Irreps(irreps_in), o3.Irreps(irreps_out), correlation=correlation,
                                   num_elements=elements, use_reduced_cg=reduced)

    hidden = "32x0e + 32x1o + 32x2e + 32x3o"
    for correlation in (1, 2, 3):
        compare(results, f"{hidden} -> {hidden}, correlation {correlation}", built(hidden, hidden, correlation, 10),
                10, gen)
    mp0_in = "128x0e + 128x1o + 128x2e + 128x3o"
    compare(results, "MACE-MP-0 medium product 0, e3nn's full CG basis",
            built(mp0_in, "128x0e + 128x1o", 3, width, reduced=False), width, gen)
    compare_finite_differences(results, built(hidden, hidden, 3, 10), 10, gen)
    compare_traced(results, model.products[0].symmetric_contractions, width, gen)
    check_errors(results, model.products[0].symmetric_contractions, width)
    if "--no-timing" not in argv:
        timing(model.products[0].symmetric_contractions, width)


if __name__ == "__main__":
    sys.exit(testing.run(sys.argv[1:], "test_mace_symmetric_contraction.py", checks))
