#!/usr/bin/env python3
"""Rewrites INTERFACE_INCLUDE_DIRECTORIES values in Kokkos' exported CMake files as proper
CMake lists: Kokkos 3.4 quotes a list of CUDA include folders into one string (separated by
newlines or blanks), which CMake 4 rejects as one non-existent path. Folders that do not exist
are dropped; nvcc finds CUDA's own headers without them.
    fix_kokkos_include_lists.py FILE..."""
import os
import re
import sys

PATTERN = re.compile(r'INTERFACE_INCLUDE_DIRECTORIES "([^"]*)"')


def fixed(match):
    folders = [f for f in re.split(r'[;\s]+', match.group(1)) if f]
    kept = [f for f in folders if f.startswith('$') or os.path.isdir(f)]
    return 'INTERFACE_INCLUDE_DIRECTORIES "%s"' % ';'.join(kept)


for path in sys.argv[1:]:
    with open(path) as f:
        text = f.read()
    new = PATTERN.sub(fixed, text)
    if new != text:
        with open(path, 'w') as f:
            f.write(new)
        print('fix_kokkos_include_lists: rewrote', path)
