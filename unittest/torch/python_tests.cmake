# Python side of the torch backend (ctest label torch), for unittest/torch/CMakeLists.txt to
# include():
#
#   torch.fixtures  make_fixtures.py writes the toy models (.pt2, .pt, model files, specs), the
#                   Cu/Ni data file and the eager references into DISTSPEC_TORCH_FIXTURES, with
#                   the torch of DISTSPEC_PYTHON (a .pt2 runs only with the libtorch that compiled
#                   it). A ctest fixture: tests that need these files say
#                   FIXTURES_REQUIRED torch_fixtures.
#   torch.export    test_export.py: the graph files, run back in Python with DISTSPEC's op
#                   semantics, equal the eager references to 1e-10; distspec-export rejects bad
#                   input; exported where nvalchemi does not import (its ops defined by the
#                   exporter), the 2-layer toy graph equals the same reference.
#   torch.fixtures_mace, torch.export_mace   the same for a 2-interaction MACE with random
#                   weights (mace_L2.pt2, ref_mace_L2.json: MACE's own periodic evaluation), and
#                   for one built and trained in fp64 and saved by torch.save (mace_fp64_L2:
#                   against mace's own fp64 calculator at 1e-12, the export's check refusing
#                   weights rounded to fp32), in DISTSPEC_PYTHON_MACE's environment; ctest
#                   fixture torch_mace_fixtures.
#   torch.fixtures_twin  the built-in mpnn of potentials/cu_mpnn_L2.json rewritten in PyTorch
#                   (native_mpnn.py), exported (.pt2, .pt); ctest fixture torch_twin_fixtures.
#   torch.fixtures_aimnet  a 3-pass AIMNet2 with random weights (aimnet_P3.pt2, ref_aimnet_P3.json:
#                   AIMNet2's own periodic evaluation of molecules.data); ctest fixture
#                   torch_aimnet_fixtures; torch.export_aimnet checks it as torch.export does.
#   torch.exporter_install  test_install.py: pip install ./tools (and [mace], [sevennet]) into
#                   fresh environments, offline; the installed distspec-export against the checkout's.
#   torch.fixtures_nequip, torch.export_nequip  a NequIP and an Allegro built with nequip's API
#                   (random weights), and a NequIP trained for two epochs by nequip-train on
#                   nequip's EMT copper and packaged by nequip-package, each exported by
#                   distspec-export; nequip's own evaluation of each (nequip_model.py); in
#                   DISTSPEC_PYTHON_NEQUIP's environment; ctest fixture torch_nequip_fixtures.
#   torch.fixtures_fastmace  a MACE trained here by mace_run_train (mace_trained.py), exported by
#                   `distspec-export --from mace` with its defaults (the fast MACE forward) as
#                   TorchScript and as AOTInductor (one compile, about a minute), and mace's
#                   own calculator on the saved file; in DISTSPEC_PYTHON_MACE's environment; ctest
#                   fixture torch_fastmace_fixtures.
#   torch.fixtures_sevennet  SevenNet-0 (sevenn, GPL-3.0, exported at test time: 7net0.pt2, fp32) and
#                   SevenNetCalculator references on four small crystals; in DISTSPEC_PYTHON_SEVENN's
#                   environment; ctest fixture torch_sevennet_fixtures.
#
# They run in the bootstrap's Python environments (DISTSPEC_PYTHON, _MACE, _SEVENN; the
# environment variables at test time win over the cache variables). Without one they report
# themselves skipped (exit 77), or fail when CI=true, as unittest/interop does. Fixtures made
# from the same sources and versions are kept (make_fixtures.py --force remakes them).
find_package(Python3 COMPONENTS Interpreter REQUIRED)
set(DISTSPEC_PYTHON "$ENV{DISTSPEC_PYTHON}" CACHE FILEPATH
    "Python of the environment with torch and nvalchemi-toolkit (scripts/bootstrap.sh)")
set(DISTSPEC_PYTHON_MACE "$ENV{DISTSPEC_PYTHON_MACE}" CACHE FILEPATH
    "Python of the environment with mace-torch layered on DISTSPEC_PYTHON's")
set(DISTSPEC_PYTHON_SEVENN "$ENV{DISTSPEC_PYTHON_SEVENN}" CACHE FILEPATH
    "Python of the environment with sevenn layered on DISTSPEC_PYTHON's")
set(DISTSPEC_PYTHON_NEQUIP "$ENV{DISTSPEC_PYTHON_NEQUIP}" CACHE FILEPATH
    "Python of the environment with nequip and nequip-allegro layered on DISTSPEC_PYTHON's")
# A build folder configured before its environment existed (a new one the bootstrap added) takes
# it from the environment at the next configure.
foreach(var DISTSPEC_PYTHON DISTSPEC_PYTHON_MACE DISTSPEC_PYTHON_SEVENN DISTSPEC_PYTHON_NEQUIP)
  if(NOT ${var} AND NOT "$ENV{${var}}" STREQUAL "")
    set(${var} "$ENV{${var}}" CACHE FILEPATH "" FORCE)
  endif()
endforeach()
set(DISTSPEC_TORCH_FIXTURES "${CMAKE_CURRENT_BINARY_DIR}/fixtures" CACHE PATH
    "where torch.fixtures writes the torch backend's test models and references")

set(_torch_py "${CMAKE_CURRENT_LIST_DIR}")

# torch_fixture_set(SET PYTHON [EXPORT_TEST] [SHARED_DATA]): torch.fixtures_SET (torch.fixtures
# for the toy set), the ctest fixture torch_SET_fixtures (torch_fixtures), and with EXPORT_TEST
# torch.export_SET checking it; SHARED_DATA: the set writes the Cu/Ni data file the others read.
function(torch_fixture_set set python)
  cmake_parse_arguments(PARSE_ARGV 2 arg "EXPORT_TEST;SHARED_DATA" "" "")
  if(set STREQUAL "toy")
    set(suffix "")
    set(set_args "")
  else()
    set(suffix "_${set}")
    set(set_args --set ${set})
  endif()
  add_test(NAME torch.fixtures${suffix}
    COMMAND "${Python3_EXECUTABLE}" "${_torch_py}/make_fixtures.py" "${DISTSPEC_TORCH_FIXTURES}" ${set_args}
            --python "${python}")
  set_tests_properties(torch.fixtures${suffix} PROPERTIES FIXTURES_SETUP torch${suffix}_fixtures
    LABELS torch SKIP_RETURN_CODE 77 TIMEOUT 600)
  if(arg_SHARED_DATA)
    set_tests_properties(torch.fixtures${suffix} PROPERTIES RESOURCE_LOCK torch_fixtures_dir)
  endif()
  if(arg_EXPORT_TEST)
    add_test(NAME torch.export${suffix}
      COMMAND "${Python3_EXECUTABLE}" "${_torch_py}/test_export.py" --fixtures "${DISTSPEC_TORCH_FIXTURES}"
              ${set_args} --python "${python}")
    set_tests_properties(torch.export${suffix} PROPERTIES FIXTURES_REQUIRED torch${suffix}_fixtures
      LABELS torch SKIP_RETURN_CODE 77 TIMEOUT 600)
  endif()
endfunction()

torch_fixture_set(toy "${DISTSPEC_PYTHON}" EXPORT_TEST SHARED_DATA)
torch_fixture_set(mace "${DISTSPEC_PYTHON_MACE}" EXPORT_TEST SHARED_DATA)
torch_fixture_set(twin "${DISTSPEC_PYTHON}" SHARED_DATA)
torch_fixture_set(aimnet "${DISTSPEC_PYTHON}" EXPORT_TEST)
torch_fixture_set(sevennet "${DISTSPEC_PYTHON_SEVENN}")
torch_fixture_set(nequip "${DISTSPEC_PYTHON_NEQUIP}" EXPORT_TEST SHARED_DATA)
torch_fixture_set(fastmace "${DISTSPEC_PYTHON_MACE}" SHARED_DATA)

# torch.mace_fast: test_mace_fast.py, the fast MACE forward (tools/distspec_export/mace_kernels/model.py)
# against mace-torch in fp64 on MACE-MP-0 medium's architecture (forces 1e-4 eV/A, energy 1e-6
# relative) and on a 2-head model, its node work on owned rows, the exporter's check of its graph, the
# fallback of a model it does not rebuild. torch.fixtures_fastmace: a MACE mace_run_train trains here,
# exported by `distspec-export --from mace` (ctest fixture torch_fastmace_fixtures; LAMMPS runs it on 1,
# 2 and 4 ranks, cases/fastmace_trained*.json). Both with the distspec_mace ops where this build makes
# their library.
add_test(NAME torch.mace_fast
  COMMAND "${Python3_EXECUTABLE}" "${_torch_py}/test_mace_fast.py" --python "${DISTSPEC_PYTHON_MACE}")
set_tests_properties(torch.mace_fast PROPERTIES LABELS torch SKIP_RETURN_CODE 77 TIMEOUT 1200)
# mace_run_train takes 2 minutes on 2 idle cores, 12 on a loaded machine.
set_tests_properties(torch.fixtures_fastmace PROPERTIES TIMEOUT 1800)
if(TARGET distspec_mace_ops)
  set_tests_properties(torch.mace_fast torch.fixtures_fastmace PROPERTIES
    ENVIRONMENT "DISTSPEC_MACE_OPS_LIBRARY=$<TARGET_FILE:distspec_mace_ops>")
endif()

# torch.wrong_files (and _mace, _sevennet, _nequip): test_wrong_files.py, distspec-export given a file
# of the wrong kind on every route (--from mace|sevennet|nequip, --deployed, --module, --spec): one
# error line naming the file, what it is and the route that takes it; a package that does not
# import named with its extra. Each in its set's environment, with the files that set's package
# writes (a MACE model file, sevenn's checkpoint, nequip's checkpoint and package).
function(torch_wrong_files set python fixtures)
  set(suffix "")
  if(NOT set STREQUAL "toy")
    set(suffix "_${set}")
  endif()
  add_test(NAME torch.wrong_files${suffix}
    COMMAND "${Python3_EXECUTABLE}" "${_torch_py}/test_wrong_files.py" --fixtures "${DISTSPEC_TORCH_FIXTURES}"
            --set ${set} --python "${python}")
  set_tests_properties(torch.wrong_files${suffix} PROPERTIES FIXTURES_REQUIRED "${fixtures}"
    LABELS torch SKIP_RETURN_CODE 77 TIMEOUT 600)
endfunction()
torch_wrong_files(toy "${DISTSPEC_PYTHON}" torch_fixtures)
torch_wrong_files(mace "${DISTSPEC_PYTHON_MACE}" "torch_fixtures;torch_mace_fixtures")
torch_wrong_files(sevennet "${DISTSPEC_PYTHON_SEVENN}" torch_fixtures)
torch_wrong_files(nequip "${DISTSPEC_PYTHON_NEQUIP}" "torch_fixtures;torch_nequip_fixtures")

# torch.exporter_install: `pip install ./tools` (and its mace and sevennet extras) into fresh
# environments layered on the bootstrap's, with no package index (the tested versions must meet
# the requirements); the installed console script writes what the checkout's writes.
add_test(NAME torch.exporter_install
  COMMAND "${Python3_EXECUTABLE}" "${_torch_py}/test_install.py" --work "${CMAKE_CURRENT_BINARY_DIR}/exporter_install"
          --python "${DISTSPEC_PYTHON}")
set_tests_properties(torch.exporter_install PROPERTIES LABELS torch SKIP_RETURN_CODE 77 TIMEOUT 900
  ENVIRONMENT "DISTSPEC_PYTHON_MACE=${DISTSPEC_PYTHON_MACE};DISTSPEC_PYTHON_SEVENN=${DISTSPEC_PYTHON_SEVENN};DISTSPEC_PYTHON_NEQUIP=${DISTSPEC_PYTHON_NEQUIP}")

# torch.element_linears_SET (sevennet, mace, nequip): test_element_linears.py, the exporter's fold of
# the element's one-hot (tools/distspec_export/element_linears.py): each folded module equals the
# package's own (fp64 1e-12, fp32 1e-6, value and gradient), the traced force graph has fewer FLOPs
# folded, a module of another operand is kept, and the set's fixtures (which torch.export_SET and the
# LAMMPS tests check against the package's own evaluation) were exported folded.
function(torch_element_linears set python)
  add_test(NAME torch.element_linears_${set}
    COMMAND "${Python3_EXECUTABLE}" "${_torch_py}/test_element_linears.py" --set ${set}
            --fixtures "${DISTSPEC_TORCH_FIXTURES}" --python "${python}")
  set_tests_properties(torch.element_linears_${set} PROPERTIES FIXTURES_REQUIRED torch_${set}_fixtures
    LABELS torch SKIP_RETURN_CODE 77 TIMEOUT 900)
endfunction()
torch_element_linears(sevennet "${DISTSPEC_PYTHON_SEVENN}")
torch_element_linears(mace "${DISTSPEC_PYTHON_MACE}")
torch_element_linears(nequip "${DISTSPEC_PYTHON_NEQUIP}")

# torch.radial_splines_sevennet: test_radial_splines.py, the exporter's radial MLPs of the edge length
# as cubic splines (tools/distspec_export/radial_splines.py): each spline equals SevenNet-0's MLP (weights
# and d/dr), the knots sit on the XPLOR switch, the traced graph does less work, and energies and
# forces equal the model's with its MLPs.
add_test(NAME torch.radial_splines_sevennet
  COMMAND "${Python3_EXECUTABLE}" "${_torch_py}/test_radial_splines.py" --set sevennet
          --python "${DISTSPEC_PYTHON_SEVENN}")
set_tests_properties(torch.radial_splines_sevennet PROPERTIES LABELS torch SKIP_RETURN_CODE 77 TIMEOUT 900)

# torch.owned_rows (the toy model and the twin) and torch.owned_rows_SET: test_owned_rows.py, each
# model's force graph with its node work on the owned rows (tools/distspec_export/rows.py) against
# the same model computing every row: equal atomic energies, forces and per-atom virials, at most
# half the matrix products over every row, the same halo exchanges.
function(torch_owned_rows set python)
  set(suffix "")
  if(NOT set STREQUAL "toy")
    set(suffix "_${set}")
  endif()
  add_test(NAME torch.owned_rows${suffix}
    COMMAND "${Python3_EXECUTABLE}" "${_torch_py}/test_owned_rows.py" --set ${set} --python "${python}")
  set_tests_properties(torch.owned_rows${suffix} PROPERTIES LABELS torch SKIP_RETURN_CODE 77 TIMEOUT 900)
endfunction()
torch_owned_rows(toy "${DISTSPEC_PYTHON}")
torch_owned_rows(sevennet "${DISTSPEC_PYTHON_SEVENN}")
torch_owned_rows(nequip "${DISTSPEC_PYTHON_NEQUIP}")

# torch.mace_<op>: test_mace_<op>.py, an op of the distspec_mace library (tools/distspec_export/
# mace_kernels/<op>.py) against mace-torch's own module, the library built here; mace-torch's
# environment is DISTSPEC_PYTHON_MACE. The CPU times against mace's own modules (minutes of mace's
# forward and backward at ~2000 nodes, printed, never checked) are left to a run of the script by hand
# without --no-timing.
function(torch_mace_op_test op)
  add_test(NAME torch.mace_${op}
    COMMAND "${Python3_EXECUTABLE}" "${_torch_py}/test_mace_${op}.py" --python "${DISTSPEC_PYTHON_MACE}" --no-timing)
  set_tests_properties(torch.mace_${op} PROPERTIES LABELS torch SKIP_RETURN_CODE 77 TIMEOUT 1200
    ENVIRONMENT "DISTSPEC_MACE_OPS_LIBRARY=$<TARGET_FILE:distspec_mace_ops>")
endfunction()
if(TARGET distspec_mace_ops)
  # distspec_mace::spline_convolution against mace's convolution on MACE-MP-0 medium's interaction
  # blocks: with the op's spline in mace's chain to 1e-11 (fp64), with mace's radial MLP within the
  # spline's tolerance, fp32 to 1e-5, traced by make_fx, bad input refused; prints the spline's error
  # for several knot counts.
  torch_mace_op_test(convolution)
  # distspec_mace::symmetric_contraction against mace's SymmetricContraction: MACE-MP-0 medium's
  # products, L = 3 hidden irreps at correlation 1..3, e3nn's full CG basis; value and d/dx on rows of
  # 3 exported elements, fp64 to 1e-12, fp32 to 1e-5; traced by make_fx with symbolic sizes; bad input
  # refused.
  torch_mace_op_test(symmetric_contraction)
  # distspec_mace::element_linear against mace's skip_tp of MACE-MP-0 medium's interaction blocks and
  # a product of two paths into one output: value and d/dx on 3 exported elements, fp64 to 1e-12, fp32
  # to 1e-5; traced by make_fx with symbolic sizes; bad input refused.
  torch_mace_op_test(element_linear)
endif()
