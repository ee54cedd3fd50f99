// The cryptography comm uses, all of it from OpenSSL's libcrypto: random
// bytes from the system's generator, HMAC-SHA256, and a comparison whose
// time does not depend on where two byte strings differ.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace comm {

inline constexpr size_t kHmacBytes = 32;

// `count` bytes from OpenSSL's generator (seeded by the kernel); throws
// comm::Error (COMM_ERR_INTERNAL) in the unlikely case it cannot give them.
std::string randomBytes(size_t count);

// HMAC-SHA256 of `message` under `key`: kHmacBytes bytes.
std::string hmacSha256(std::string_view key, std::string_view message);

// Whether `a` and `b` are equal, in time that depends only on their sizes.
bool sameBytes(std::string_view a, std::string_view b);

// `bytes` as lower-case hexadecimal digits.
std::string hexDigits(std::string_view bytes);

}  // namespace comm
