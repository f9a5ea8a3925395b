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
#                   input.
#   torch.fixtures_mace, torch.export_mace   the same for a 2-interaction MACE with random
#                   weights (mace_L2.pt2, ref_mace_L2.json: MACE's own periodic evaluation), in
#                   DISTSPEC_PYTHON_MACE's environment; ctest fixture torch_mace_fixtures.
#   torch.fixtures_twin  the built-in mpnn of potentials/cu_mpnn_L2.json rewritten in PyTorch
#                   (native_mpnn.py), exported (.pt2, .pt); ctest fixture torch_twin_fixtures.
#   torch.fixtures_aimnet  a 3-pass AIMNet2 with random weights (aimnet_P3.pt2, ref_aimnet_P3.json:
#                   AIMNet2's own periodic evaluation of molecules.data); ctest fixture
#                   torch_aimnet_fixtures; torch.export_aimnet checks it as torch.export does.
#   torch.fixtures_sevennet  SevenNet-0 (sevenn, GPL-3.0, exported at test time: 7net0.pt2, fp32) and
#                   SevenNetCalculator references on four small crystals; in DISTSPEC_PYTHON_SEVENN's
#                   environment; ctest fixture torch_sevennet_fixtures.
#
# They run in the bootstrap's Python environments (DISTSPEC_PYTHON, DISTSPEC_PYTHON_MACE; the
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
set(DISTSPEC_TORCH_FIXTURES "${CMAKE_CURRENT_BINARY_DIR}/fixtures" CACHE PATH
    "where torch.fixtures writes the torch backend's test models and references")

set(_torch_py "${CMAKE_CURRENT_LIST_DIR}")
add_test(NAME torch.fixtures
  COMMAND "${Python3_EXECUTABLE}" "${_torch_py}/make_fixtures.py" "${DISTSPEC_TORCH_FIXTURES}"
          --python "${DISTSPEC_PYTHON}")
add_test(NAME torch.export
  COMMAND "${Python3_EXECUTABLE}" "${_torch_py}/test_export.py" --fixtures "${DISTSPEC_TORCH_FIXTURES}"
          --python "${DISTSPEC_PYTHON}")
add_test(NAME torch.fixtures_mace
  COMMAND "${Python3_EXECUTABLE}" "${_torch_py}/make_fixtures.py" "${DISTSPEC_TORCH_FIXTURES}" --set mace
          --python "${DISTSPEC_PYTHON_MACE}")
add_test(NAME torch.export_mace
  COMMAND "${Python3_EXECUTABLE}" "${_torch_py}/test_export.py" --fixtures "${DISTSPEC_TORCH_FIXTURES}" --set mace
          --python "${DISTSPEC_PYTHON_MACE}")
add_test(NAME torch.fixtures_twin
  COMMAND "${Python3_EXECUTABLE}" "${_torch_py}/make_fixtures.py" "${DISTSPEC_TORCH_FIXTURES}" --set twin
          --python "${DISTSPEC_PYTHON}")
set_tests_properties(torch.fixtures PROPERTIES FIXTURES_SETUP torch_fixtures)
set_tests_properties(torch.fixtures_twin PROPERTIES FIXTURES_SETUP torch_twin_fixtures)
add_test(NAME torch.fixtures_aimnet
  COMMAND "${Python3_EXECUTABLE}" "${_torch_py}/make_fixtures.py" "${DISTSPEC_TORCH_FIXTURES}" --set aimnet
          --python "${DISTSPEC_PYTHON}")
add_test(NAME torch.export_aimnet
  COMMAND "${Python3_EXECUTABLE}" "${_torch_py}/test_export.py" --fixtures "${DISTSPEC_TORCH_FIXTURES}" --set aimnet
          --python "${DISTSPEC_PYTHON}")
set_tests_properties(torch.fixtures_aimnet PROPERTIES FIXTURES_SETUP torch_aimnet_fixtures)
set_tests_properties(torch.export_aimnet PROPERTIES FIXTURES_REQUIRED torch_aimnet_fixtures)
set_tests_properties(torch.fixtures_aimnet torch.export_aimnet PROPERTIES LABELS torch SKIP_RETURN_CODE 77
  TIMEOUT 600)
add_test(NAME torch.fixtures_sevennet
  COMMAND "${Python3_EXECUTABLE}" "${_torch_py}/make_fixtures.py" "${DISTSPEC_TORCH_FIXTURES}" --set sevennet
          --python "${DISTSPEC_PYTHON_SEVENN}")
set_tests_properties(torch.fixtures_sevennet PROPERTIES FIXTURES_SETUP torch_sevennet_fixtures LABELS torch
  SKIP_RETURN_CODE 77 TIMEOUT 600)
set_tests_properties(torch.export PROPERTIES FIXTURES_REQUIRED torch_fixtures)
set_tests_properties(torch.fixtures_mace PROPERTIES FIXTURES_SETUP torch_mace_fixtures)
set_tests_properties(torch.export_mace PROPERTIES FIXTURES_REQUIRED torch_mace_fixtures)
# The sets write the same data file into the folder: not at the same time.
set_tests_properties(torch.fixtures torch.fixtures_mace torch.fixtures_twin PROPERTIES RESOURCE_LOCK torch_fixtures_dir)
set_tests_properties(torch.fixtures torch.export torch.fixtures_mace torch.export_mace torch.fixtures_twin PROPERTIES
  LABELS torch SKIP_RETURN_CODE 77 TIMEOUT 600)
