// DH-HMAC-CHAP secret checks: see dhchap_key.h.
#include "daemon/dhchap_key.h"

#include <cstdint>
#include <vector>

namespace gpuraid::daemon {

namespace {

constexpr const char* kHowToMake = " (make one with: nvme gen-dhchap-key --nqn HOSTNQN)";

int b64_value(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

// Standard base64 with '=' padding, strict (as the kernel's base64_decode).
bool b64_decode(const std::string& in, std::vector<uint8_t>* out) {
  if (in.empty() || in.size() % 4) return false;
  size_t pad = 0;
  while (pad < 2 && in[in.size() - 1 - pad] == '=') pad++;
  uint32_t acc = 0;
  int bits = 0;
  for (size_t i = 0; i < in.size() - pad; i++) {
    int v = b64_value(in[i]);
    if (v < 0) return false;
    acc = (acc << 6) | uint32_t(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out->push_back(uint8_t(acc >> bits));
    }
  }
  return (acc & ((1u << bits) - 1)) == 0;  // no stray bits before the padding
}

// CRC-32 (IEEE, reflected; as zlib and the kernel's ~crc32_le(~0, ...)).
uint32_t crc32_ieee(const uint8_t* p, size_t n) {
  uint32_t c = 0xffffffffu;
  for (size_t i = 0; i < n; i++) {
    c ^= p[i];
    for (int k = 0; k < 8; k++) c = (c >> 1) ^ (0xedb88320u & (0u - (c & 1)));
  }
  return ~c;
}

}  // namespace

std::string dhchap_trim(const std::string& s) {
  const char* ws = " \t\r\n";
  size_t b = s.find_first_not_of(ws);
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(ws) - b + 1);
}

std::string dhchap_key_problem(const std::string& key) {
  const std::string form = "the DH-HMAC-CHAP key is not of the form DHHC-1:HH:BASE64:";
  if (key.empty()) return "the DH-HMAC-CHAP key is empty" + std::string(kHowToMake);
  if (key.size() > 256) return "the DH-HMAC-CHAP key is too long: at most 256 characters" + std::string(kHowToMake);
  if (key.compare(0, 7, "DHHC-1:") != 0 || key.size() < 11 || key[9] != ':' || key.back() != ':')
    return form + kHowToMake;
  if (key[7] != '0' || key[8] < '0' || key[8] > '3')
    return "the DH-HMAC-CHAP key's hash (DHHC-1:HH:) is not 00, 01, 02 or 03" + std::string(kHowToMake);
  std::vector<uint8_t> raw;
  if (!b64_decode(key.substr(10, key.size() - 11), &raw)) return "the DH-HMAC-CHAP key's BASE64 part is not valid base64" + std::string(kHowToMake);
  if (raw.size() != 36 && raw.size() != 52 && raw.size() != 68)
    return "the DH-HMAC-CHAP key holds " + std::to_string(raw.size() < 4 ? 0 : raw.size() - 4) +
           " bytes: it must hold 32, 48 or 64 (and its CRC)" + kHowToMake;
  const size_t n = raw.size() - 4;
  const uint32_t crc = uint32_t(raw[n]) | uint32_t(raw[n + 1]) << 8 | uint32_t(raw[n + 2]) << 16 |
                       uint32_t(raw[n + 3]) << 24;
  if (crc != crc32_ieee(raw.data(), n))
    return "the DH-HMAC-CHAP key's CRC does not match (a character changed or missing?)" + std::string(kHowToMake);
  return "";
}

}  // namespace gpuraid::daemon
