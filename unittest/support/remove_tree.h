// Removes a folder and everything under it, for tests' scratch folders.
//
// Not std::filesystem::remove_all: LibTorch's libtorch.so (2.11 as the GPU machines' pip wheel
// ships it) exports a copy of that function, and in a test binary linked against LibTorch the
// dynamic linker binds the call to that copy, ahead of libstdc++'s, where it jumps through a null
// pointer (seen as a SIGSEGV at address 0 on the first test that cleaned up its folder). POSIX's
// nftw has no such twin.
#pragma once

#include <ftw.h>
#include <stdio.h>

#include <string>

namespace distspec::testing {

inline void remove_tree(const std::string& path)
{
  const auto remove_one = [](const char* entry, const struct stat*, int, struct FTW*) { return ::remove(entry); };
  ::nftw(path.c_str(), remove_one, 16, FTW_DEPTH | FTW_PHYS);
}

}  // namespace distspec::testing
