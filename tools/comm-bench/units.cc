#include "units.h"

#include <cctype>
#include <charconv>
#include <stdexcept>

#include <fmt/format.h>

namespace commbench {

size_t parseBytes(std::string_view text) {
  auto bad = [&] {
    return std::invalid_argument(fmt::format("'{}' is not a byte count (digits with an optional K, M or G)", text));
  };
  size_t value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end == text.data()) throw bad();
  std::string suffix(end, text.data() + text.size());
  for (char& c : suffix) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  unsigned shift = 0;
  if (suffix.empty() || suffix == "B") {
    shift = 0;
  } else if (suffix == "K" || suffix == "KB" || suffix == "KIB") {
    shift = 10;
  } else if (suffix == "M" || suffix == "MB" || suffix == "MIB") {
    shift = 20;
  } else if (suffix == "G" || suffix == "GB" || suffix == "GIB") {
    shift = 30;
  } else {
    throw bad();
  }
  if (shift > 0 && value > (SIZE_MAX >> shift)) throw bad();
  return value << shift;
}

std::string formatBytes(size_t bytes) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  unsigned unit = 0;
  size_t whole = bytes;
  while (unit + 1 < std::size(kUnits) && whole >= 1024 && whole % 1024 == 0) {
    whole /= 1024;
    ++unit;
  }
  if (whole < 1024 || unit + 1 == std::size(kUnits)) return fmt::format("{} {}", whole, kUnits[unit]);
  double scaled = static_cast<double>(bytes);
  unit = 0;
  while (scaled >= 1024 && unit + 1 < std::size(kUnits)) {
    scaled /= 1024;
    ++unit;
  }
  return fmt::format("{:.1f} {}", scaled, kUnits[unit]);
}

}  // namespace commbench
