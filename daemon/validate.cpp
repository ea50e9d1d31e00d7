#include "daemon/validate.h"

#include <cctype>

namespace gpuraid::daemon {

grpc::Status invalid(const std::string& m) { return {grpc::StatusCode::INVALID_ARGUMENT, m}; }
grpc::Status not_found(const std::string& m) { return {grpc::StatusCode::NOT_FOUND, m}; }
grpc::Status precondition(const std::string& m) { return {grpc::StatusCode::FAILED_PRECONDITION, m}; }
grpc::Status exists(const std::string& m) { return {grpc::StatusCode::ALREADY_EXISTS, m}; }

std::string quote(const std::string& s) {
  std::string out = "'";
  for (size_t i = 0; i < s.size() && i < 64; i++) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    out += (c >= 0x20 && c < 0x7f) ? char(c) : '?';
  }
  if (s.size() > 64) out += "...";
  return out + "'";
}

grpc::Status check_name(const std::string& what, const std::string& s) {
  if (s.empty()) return invalid(what + " is empty");
  if (s.size() > kMaxNameLen)
    return invalid(what + " " + quote(s) + " is too long (" + std::to_string(s.size()) + " characters, at most " +
                   std::to_string(kMaxNameLen) + ")");
  if (!isalnum(static_cast<unsigned char>(s[0])))
    return invalid(what + " " + quote(s) + " must start with a letter or digit");
  for (char c : s)
    if (!isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '-')
      return invalid(what + " " + quote(s) + " may only hold letters, digits, '.', '_' and '-'");
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
