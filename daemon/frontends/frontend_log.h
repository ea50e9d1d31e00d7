// Diagnostics of the frontends: a refused or dropped client, a failed TLS
// handshake, a ublk queue error. The frontends are a library of their own
// (tests use them without the daemon), so they do not log through spdlog
// themselves: the daemon routes these lines into its log with
// set_frontend_log_sink(); without a sink they go to stderr.
#pragma once

namespace gpuraid {

using FrontendLogSink = void (*)(const char* line);
void set_frontend_log_sink(FrontendLogSink sink);
// One line (printf format, no trailing newline needed).
void frontend_log(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

}  // namespace gpuraid
