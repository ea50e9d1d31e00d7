// Server-side validation helpers: every API field goes through one of these
// before anything changes. Errors are gRPC statuses a person can act on.
#pragma once
#include <grpcpp/support/status.h>

#include <cstdint>
#include <string>

namespace gpuraid::daemon {

constexpr size_t kMaxNameLen = 63;
constexpr size_t kMaxPathLen = 4095;

grpc::Status invalid(const std::string& msg);
grpc::Status not_found(const std::string& msg);
grpc::Status precondition(const std::string& msg);
grpc::Status exists(const std::string& msg);

// Names of drives, groups and volumes: 1..63 bytes of UTF-8, starting with
// a letter or digit: ASCII letters, digits, '.', '_', '-', and any other
// visible character (names are stored and returned intact, compared byte
// for byte). `what` names the field in the message.
grpc::Status check_name(const std::string& what, const std::string& s);
// A reference to an existing object: non-empty and sane (NOT_FOUND later).
grpc::Status check_ref(const std::string& what, const std::string& s);
// An absolute path without control characters.
grpc::Status check_path(const std::string& what, const std::string& s);
// A string safe to quote back in an error message: truncated, its UTF-8
// kept, anything else (invalid bytes, controls) as \xNN.
std::string quote(const std::string& s);

}  // namespace gpuraid::daemon
