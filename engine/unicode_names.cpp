#include "engine/unicode_names.h"

#include <unicode/unorm2.h>
#include <unicode/ustring.h>
#include <unicode/uspoof.h>

#include <memory>
#include <vector>

namespace gpuraid {

std::string nfc(const std::string& s) {
  UErrorCode e = U_ZERO_ERROR;
  const UNormalizer2* n = unorm2_getNFCInstance(&e);
  if (U_FAILURE(e)) return s;
  // ICU normalises UTF-16: convert, normalise, convert back.
  std::vector<UChar> in(s.size() + 1), out;
  int32_t len = 0;
  u_strFromUTF8(in.data(), int32_t(in.size()), &len, s.data(), int32_t(s.size()), &e);
  if (U_FAILURE(e)) return s;
  if (unorm2_isNormalized(n, in.data(), len, &e) && U_SUCCESS(e)) return s;
  e = U_ZERO_ERROR;
  out.resize(size_t(len) * 3 + 16);  // NFC never grows a string beyond 3x
  const int32_t olen = unorm2_normalize(n, in.data(), len, out.data(), int32_t(out.size()), &e);
  if (U_FAILURE(e)) return s;
  std::string r(size_t(olen) * 3 + 4, '\0');
  int32_t rlen = 0;
  u_strToUTF8(r.data(), int32_t(r.size()), &rlen, out.data(), olen, &e);
  if (U_FAILURE(e)) return s;
  r.resize(size_t(rlen));
  return r;
}

std::string lookalike_key(const std::string& s) {
  UErrorCode e = U_ZERO_ERROR;
  std::unique_ptr<USpoofChecker, decltype(&uspoof_close)> sc(uspoof_open(&e), uspoof_close);
  if (U_FAILURE(e)) return "";
  uspoof_setChecks(sc.get(), USPOOF_CONFUSABLE, &e);
  std::string out(s.size() * 4 + 16, '\0');
  const int32_t n = uspoof_getSkeletonUTF8(sc.get(), 0, s.data(), int32_t(s.size()), out.data(), int32_t(out.size()), &e);
  if (e == U_BUFFER_OVERFLOW_ERROR) {
    e = U_ZERO_ERROR;
    out.assign(size_t(n) + 1, '\0');
    uspoof_getSkeletonUTF8(sc.get(), 0, s.data(), int32_t(s.size()), out.data(), int32_t(out.size()), &e);
  }
  if (U_FAILURE(e)) return "";
  out.resize(size_t(n));
  return out;
}

}  // namespace gpuraid
