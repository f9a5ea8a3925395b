#!/usr/bin/env python3
"""distspec_mace::element_linear against mace-torch's own skip_tp, ctest torch.mace_element_linear.

mace's skip_tp (e3nn's FullyConnectedTensorProduct of the features with the element's one-hot) of
MACE-MP-0 medium's two interaction blocks (bench/accelerators/mace_mp0_medium.py, random weights:
128x(0e+1o+2e+3o) -> the same, 4 paths; 128x0e+128x1o -> 128x0e, 1 path) and of a block with two
input irreps into one output (32x0e+32x0e+16x1o -> 16x0e+16x1o, 5 elements):

- on rows of 3 exported elements (random columns of the one-hot, in random order), random x: the
  op's value and its gradient with respect to x (torch.autograd.grad with a random cotangent) equal
  skip_tp's given the one-hot of each row's element, relative to their largest magnitude: fp64 within
  1e-12, fp32 (skip_tp and ours in fp32) within 1e-5; the backward op equals central differences of
  the forward (gradcheck);
- traced by make_fx with symbolic sizes (the fake implementations): both ops in the graph, the same
  numbers on another size;
- bad input gives the op's message: a species outside the exported elements, x of the wrong width,
  a second derivative, a module that is not such a tensor product;
- the CPU time of forward + backward on 2000 nodes, ours against element_linears' fold (every
  exported element's matrices, then each row's own) and mace's skip_tp (printed, not checked).

  test_mace_element_linear.py [--library LIBRARY] [--python PYTHON] [--no-timing]
"""

from __future__ import annotations

import sys

import mace_op_testing as testing
from mace_op_testing import Results, expect_error, one_hot

ROWS_PER_ELEMENT = 40


def inputs(tp, n_elements: int, dtype, gen):
    import torch  # noqa: PLC0415

    species = torch.arange(n_elements).repeat(ROWS_PER_ELEMENT)
    species = species[torch.randperm(species.shape[0], generator=gen)]
    x = torch.randn(species.shape[0], tp.irreps_in1.dim, generator=gen, dtype=torch.float64)
    return x.to(dtype), species


def compare(results: Results, label: str, tp, gen) -> None:
    """Ours against `tp` (fp64; turned fp32 in place for the fp32 half)."""
    from distspec_export.mace_kernels.element_linear import ElementLinear  # noqa: PLC0415

    testing.compare_with_mace(results, label, "skip_tp's", tp, tp.irreps_in2.dim,
                              lambda rows, dtype: ElementLinear.from_mace(tp, rows, dtype),
                              lambda n_elements, dtype, gen: inputs(tp, n_elements, dtype, gen), gen)


def compare_traced(results: Results, tp, gen) -> None:
    import torch  # noqa: PLC0415
    from distspec_export.mace_kernels.element_linear import ElementLinear  # noqa: PLC0415

    ours = ElementLinear.from_mace(tp, [tp.irreps_in2.dim - 1, 0], torch.float64)
    x, species = inputs(tp, 2, torch.float64, gen)
    testing.check_traced(results, "element_linear", ours, x, species)


def compare_finite_differences(results: Results, tp, gen) -> None:
    """The backward op against central differences of the forward op (torch.autograd.gradcheck, fp64)."""
    import torch  # noqa: PLC0415
    from distspec_export.mace_kernels.element_linear import ElementLinear  # noqa: PLC0415

    ours = ElementLinear.from_mace(tp, [1, tp.irreps_in2.dim - 1], torch.float64)
    x, species = inputs(tp, 2, torch.float64, gen)
    testing.check_gradcheck(results, ours, x[:4], species[:4])


def check_errors(results: Results, tp) -> None:
    import torch  # noqa: PLC0415
    from distspec_export.mace_kernels.element_linear import ElementLinear  # noqa: PLC0415
    from distspec_export.trace import ExportError  # noqa: PLC0415

    ours = ElementLinear.from_mace(tp, [3, 1, 4], torch.float64)
    x, species = inputs(tp, 3, torch.float64, torch.Generator().manual_seed(5))
    op = "distspec_mace::element_linear"
    expect_error(results, "species outside the exported elements", lambda: ours(x, species + 1), op,
                 "species holds values in [1, 3], outside [0, 3)")
    expect_error(results, "species of another length", lambda: ours(x, species[1:]), op, "species must be int64 [n]")
    expect_error(results, "x narrower than a path's block", lambda: ours(x[:, :100], species), op,
                 "reaches beyond x's 100 columns")
    expect_error(results, "x float32, tables float64", lambda: ours(x.float(), species), op, "weights must be Float")
    expect_error(results, "second derivative", testing.second_derivative(lambda xg: ours(xg, species), x),
                 "element_linear_backward", "second derivatives are not implemented")
    expect_error(results, "a module that is not such a tensor product", lambda: ElementLinear.from_mace(
        torch.nn.Linear(2, 2), [0], torch.float64), "is not a tensor product of features with the element's one-hot",
        kind=ExportError)


def timing(tp, label: str) -> None:
    import torch  # noqa: PLC0415
    from distspec_export import element_linears  # noqa: PLC0415
    from distspec_export.mace_kernels.element_linear import ElementLinear  # noqa: PLC0415

    rows = [5, 13, 28]
    width = tp.irreps_in2.dim
    gen = torch.Generator().manual_seed(9)

    def calls_at(dtype):
        ours = ElementLinear.from_mace(tp, rows, dtype)
        folded = element_linears.FoldedTensorProduct(tp, one_hot(rows, torch.arange(3), width, dtype))
        species, x, y = testing.timing_inputs(rows, width, (tp.irreps_in1.dim,), dtype, gen)
        return x, {"ours": lambda xg: ours(xg, species), "element_linears' fold": lambda xg: folded(xg, y),
                   "mace's skip_tp": lambda xg: tp(xg, y)}

    for precision, times in testing.cpu_times(tp, calls_at, lambda name: 3):
        print(testing.timing_line(f"{label} {precision}", times))


def checks(results: Results, argv: list[str]) -> None:
    import torch  # noqa: PLC0415
    from e3nn import o3  # noqa: PLC0415

    import mace_mp0_medium  # noqa: PLC0415

    gen = torch.Generator().manual_seed(0)
    model = mace_mp0_medium.build(dtype="float64")
    for k, block in enumerate(model.interactions):
        tp = block.skip_tp
        compare(results, f"MACE-MP-0 medium interaction {k} skip_tp ({tp.irreps_in1} -> {tp.irreps_out})", tp, gen)
    torch.manual_seed(1)
    two_into_one = o3.FullyConnectedTensorProduct(o3.Irreps("32x0e + 32x0e + 16x1o"), o3.Irreps("5x0e"),
                                                  o3.Irreps("16x0e + 16x1o")).double()
    compare(results, "32x0e+32x0e+16x1o -> 16x0e+16x1o (two paths into one output)", two_into_one, gen)
    compare_finite_differences(results, two_into_one, gen)
    compare_traced(results, model.interactions[1].skip_tp, gen)
    check_errors(results, model.interactions[1].skip_tp)
    if "--no-timing" not in argv:
        for k, block in enumerate(model.interactions):
            timing(block.skip_tp, f"interaction {k}")


if __name__ == "__main__":
    sys.exit(testing.run(sys.argv[1:], "test_mace_element_linear.py", checks))
