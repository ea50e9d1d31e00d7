#include "engine/utf8.h"

#include <cctype>
#include <cstdio>

namespace gpuraid {

size_t utf8_decode(const std::string& s, size_t i, uint32_t* cp) {
  const auto b = [&](size_t k) { return static_cast<unsigned char>(s[i + k]); };
  const unsigned char c = b(0);
  size_t n;
  uint32_t v, min;
  if (c < 0x80) return *cp = c, 1;
  if ((c & 0xe0) == 0xc0) n = 2, v = c & 0x1f, min = 0x80;
  else if ((c & 0xf0) == 0xe0) n = 3, v = c & 0x0f, min = 0x800;
  else if ((c & 0xf8) == 0xf0) n = 4, v = c & 0x07, min = 0x10000;
  else return 0;
  if (i + n > s.size()) return 0;
  for (size_t k = 1; k < n; k++) {
    if ((b(k) & 0xc0) != 0x80) return 0;
    v = v << 6 | (b(k) & 0x3f);
  }
  if (v < min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff)) return 0;
  *cp = v;
  return n;
}

std::string utf8_quote(const std::string& s, size_t max_bytes) {
  std::string out = "'";
  uint32_t cp;
  size_t i = 0;
  for (size_t n; i < s.size() && i < max_bytes; i += n) {
    n = utf8_decode(s, i, &cp);
    if (n && !utf8_invisible(cp)) {
      out += s.substr(i, n);  // a name in any script comes back as written
    } else {
      char esc[8];
      snprintf(esc, sizeof esc, "\\x%02x", static_cast<unsigned char>(s[i]));
      out += esc;
      n = 1;
    }
  }
  if (i < s.size()) out += "...";
  return out + "'";
}

bool utf8_valid(const std::string& s) {
  uint32_t cp;
  for (size_t i = 0, n; i < s.size(); i += n)
    if (!(n = utf8_decode(s, i, &cp))) return false;
  return true;
}

bool utf8_invisible(uint32_t c) {
  return c < 0x20 || (c >= 0x7f && c <= 0xa0) || c == 0xad || c == 0x034f || c == 0x061c || c == 0x115f ||
         c == 0x1160 || c == 0x1680 || c == 0x180e || (c >= 0x2000 && c <= 0x200f) || (c >= 0x2028 && c <= 0x202f) ||
         (c >= 0x205f && c <= 0x206f) || c == 0x3000 || c == 0x3164 || (c >= 0xfdd0 && c <= 0xfdef) ||
         (c >= 0xfe00 && c <= 0xfe0f) || c == 0xfeff || c == 0xffa0 || (c >= 0xfff0 && c <= 0xfffd) ||
         (c & 0xfffe) == 0xfffe || (c >= 0xe0000 && c <= 0xe0fff);
}

namespace {
// Markus Kuhn's wcwidth ranges, abridged: combining marks (0 columns) and
// East Asian wide/fullwidth blocks (2 columns).
bool combining(uint32_t c) {
  return (c >= 0x0300 && c <= 0x036f) || (c >= 0x0483 && c <= 0x0489) || (c >= 0x0591 && c <= 0x05bd) ||
         (c >= 0x0610 && c <= 0x061a) || (c >= 0x064b && c <= 0x065f) || (c >= 0x0900 && c <= 0x0903) ||
         (c >= 0x093a && c <= 0x094f) || (c >= 0x1ab0 && c <= 0x1aff) || (c >= 0x1dc0 && c <= 0x1dff) ||
         (c >= 0x20d0 && c <= 0x20ff) || (c >= 0xfe20 && c <= 0xfe2f);
}
bool wide(uint32_t c) {
  return (c >= 0x1100 && c <= 0x115f) || (c >= 0x2e80 && c <= 0x303e) || (c >= 0x3041 && c <= 0x33ff) ||
         (c >= 0x3400 && c <= 0x4dbf) || (c >= 0x4e00 && c <= 0x9fff) || (c >= 0xa000 && c <= 0xa4cf) ||
         (c >= 0xac00 && c <= 0xd7a3) || (c >= 0xf900 && c <= 0xfaff) || (c >= 0xfe30 && c <= 0xfe4f) ||
         (c >= 0xff00 && c <= 0xff60) || (c >= 0xffe0 && c <= 0xffe6) || (c >= 0x1f300 && c <= 0x1f64f) ||
         (c >= 0x1f900 && c <= 0x1f9ff) || (c >= 0x20000 && c <= 0x3fffd);
}
}  // namespace

size_t display_width(const std::string& s) {
  size_t w = 0;
  uint32_t cp;
  for (size_t i = 0, n; i < s.size(); i += n) {
    n = utf8_decode(s, i, &cp);
    if (!n) n = 1, cp = '?';
    w += combining(cp) || (cp >= 0x200b && cp <= 0x200f) ? 0 : wide(cp) ? 2 : 1;
  }
  return w;
}

bool name_rule_ok(const std::string& s, size_t max_bytes, std::string* why) {
  if (s.empty()) return *why = "is empty", false;
  if (s.size() > max_bytes)
    return *why = "is too long (" + std::to_string(s.size()) + " bytes, at most " + std::to_string(max_bytes) + ")", false;
  if (!utf8_valid(s)) return *why = "is not valid UTF-8", false;
  const auto ok = [](uint32_t c) { return c >= 0x80 ? !utf8_invisible(c) : isalnum(int(c)) != 0; };
  uint32_t cp;
  utf8_decode(s, 0, &cp);
  if (!ok(cp)) return *why = "must start with a letter or digit", false;
  for (size_t i = 0, n; i < s.size(); i += n) {
    n = utf8_decode(s, i, &cp);
    if (!ok(cp) && cp != '.' && cp != '_' && cp != '-')
      return *why = "may only hold letters and digits (any script), '.', '_' and '-' (no spaces, controls or "
                    "invisible characters)",
             false;
  }
  return true;
}

}  // namespace gpuraid
