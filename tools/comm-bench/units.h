// Byte counts as people type and read them: "64K", "1M", "4G" (powers of
// 1024, like nccl-tests' -b/-e), and "64 KiB" in tables.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace commbench {

// Parses a non-negative byte count with an optional K, M or G suffix (either
// case, an optional trailing "B" or "iB"). Throws std::invalid_argument
// naming the text when it is not one.
size_t parseBytes(std::string_view text);

// "8 B", "64 KiB", "1 MiB", "1.5 MiB": exact binary units when the count is a
// multiple, one decimal otherwise.
std::string formatBytes(size_t bytes);

}  // namespace commbench
