// Runs an API call so that a bug cannot take the daemon down with it (an
// exception is reported as INTERNAL), and logs refusals (rate-limited).
#pragma once
#include <grpcpp/support/status.h>

#include <string>

#include "daemon/logging.h"

namespace gpuraid::daemon {

template <typename F>
grpc::Status guarded(const char* call, F&& f) {
  try {
    grpc::Status s = f();
    if (!s.ok() && s.error_code() != grpc::StatusCode::NOT_FOUND)
      log_limited(spdlog::level::info, std::string("refused:") + call, "{} refused: {}", call, s.error_message());
    return s;
  } catch (const std::exception& e) {
    spdlog::error("{} failed: {}", call, e.what());
    return {grpc::StatusCode::INTERNAL, std::string(call) + " failed inside the daemon: " + e.what()};
  }
}

}  // namespace gpuraid::daemon
