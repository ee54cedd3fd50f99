#include "common/hmac.h"

#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include "common/error.h"

namespace comm {
namespace {

std::string openSslError() {
  char text[256] = "unknown error";
  if (unsigned long code = ERR_get_error(); code != 0) ERR_error_string_n(code, text, sizeof text);
  return text;
}

}  // namespace

std::string randomBytes(size_t count) {
  std::string bytes(count, '\0');
  if (count > 0 && RAND_bytes(reinterpret_cast<unsigned char*>(bytes.data()), static_cast<int>(count)) != 1) {
    fail(COMM_ERR_INTERNAL, "OpenSSL could not make {} random bytes: {}", count, openSslError());
  }
  return bytes;
}

std::string hmacSha256(std::string_view key, std::string_view message) {
  std::string mac(kHmacBytes, '\0');
  unsigned int length = 0;
  if (HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
           reinterpret_cast<const unsigned char*>(message.data()), message.size(),
           reinterpret_cast<unsigned char*>(mac.data()), &length) == nullptr ||
      length != kHmacBytes) {
    fail(COMM_ERR_INTERNAL, "OpenSSL could not compute an HMAC-SHA256: {}", openSslError());
  }
  return mac;
}

bool sameBytes(std::string_view a, std::string_view b) {
  return a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

std::string hexDigits(std::string_view bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string text;
  text.reserve(2 * bytes.size());
  for (char byte : bytes) {
    const auto value = static_cast<unsigned char>(byte);
    text += kDigits[value >> 4];
    text += kDigits[value & 0xf];
  }
  return text;
}

}  // namespace comm
