#include "daemon/validate.h"

#include <cctype>

#include "engine/utf8.h"

namespace gpuraid::daemon {

grpc::Status invalid(const std::string& m) { return {grpc::StatusCode::INVALID_ARGUMENT, m}; }
grpc::Status not_found(const std::string& m) { return {grpc::StatusCode::NOT_FOUND, m}; }
grpc::Status precondition(const std::string& m) { return {grpc::StatusCode::FAILED_PRECONDITION, m}; }
grpc::Status exists(const std::string& m) { return {grpc::StatusCode::ALREADY_EXISTS, m}; }

std::string quote(const std::string& s) { return utf8_quote(s, 64); }

grpc::Status check_name(const std::string& what, const std::string& s) {
  if (s.empty()) return invalid(what + " is empty");
  if (s.size() > kMaxNameLen)
    return invalid(what + " " + quote(s) + " is too long (" + std::to_string(s.size()) + " bytes, at most " +
                   std::to_string(kMaxNameLen) + ")");
  if (!utf8_valid(s)) return invalid(what + " " + quote(s) + " is not valid UTF-8");
  const auto ok = [](uint32_t c) { return c >= 0x80 ? !utf8_invisible(c) : isalnum(int(c)) != 0; };
  uint32_t cp;
  utf8_decode(s, 0, &cp);
  if (!ok(cp)) return invalid(what + " " + quote(s) + " must start with a letter or digit");
  for (size_t i = 0, n; i < s.size(); i += n) {
    n = utf8_decode(s, i, &cp);
    if (!ok(cp) && cp != '.' && cp != '_' && cp != '-')
      return invalid(what + " " + quote(s) +
                     " may only hold letters and digits (any script), '.', '_' and '-' (no spaces, controls or "
                     "invisible characters)");
  }
  return grpc::Status::OK;
}

grpc::Status check_ref(const std::string& what, const std::string& s) {
  if (s.empty()) return invalid(what + " is missing");
  if (s.size() > kMaxNameLen) return not_found("no " + what + " " + quote(s));
  return grpc::Status::OK;
}

grpc::Status check_path(const std::string& what, const std::string& s) {
  if (s.empty()) return invalid(what + " is missing");
  if (s.size() > kMaxPathLen) return invalid(what + " is too long (" + std::to_string(s.size()) + " bytes)");
  if (s[0] != '/') return invalid(what + " " + quote(s) + " must be an absolute path");
  for (char c : s)
    if (static_cast<unsigned char>(c) < 0x20) return invalid(what + " " + quote(s) + " holds control characters");
  return grpc::Status::OK;
}

}  // namespace gpuraid::daemon
