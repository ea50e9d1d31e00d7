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
  std::string why;
  if (name_rule_ok(s, kMaxNameLen, &why)) return grpc::Status::OK;
  return invalid(what + (s.empty() ? " " : " " + quote(s) + " ") + why);
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
