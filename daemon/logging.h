// Logging with spdlog: to stderr (journal-friendly: no timestamps when
// systemd captures the stream, it adds its own) or to a file that SIGHUP
// reopens (logrotate). Repeats of one message key are rate-limited.
#pragma once
#include <spdlog/spdlog.h>

#include <string>

namespace gpuraid::daemon {

// file empty: stderr. level: trace|debug|info|warn|error. False with *err on a bad level or file.
bool setup_logging(const std::string& file, const std::string& level, std::string* err);
// SIGHUP: reopen the log file (no-op on stderr).
void reopen_logs();

// At most one line per key every 5 s; the next line that passes says how
// many were suppressed.
bool log_allowed(const std::string& key, uint64_t* suppressed);

template <typename... Args>
void log_limited(spdlog::level::level_enum lvl, const std::string& key, spdlog::format_string_t<Args...> fmt,
                 Args&&... args) {
  uint64_t dropped = 0;
  if (!spdlog::should_log(lvl) || !log_allowed(key, &dropped)) return;
  std::string msg = fmt::format(fmt, std::forward<Args>(args)...);
  if (dropped) msg += fmt::format(" ({} similar messages suppressed)", dropped);
  spdlog::log(lvl, "{}", msg);
}

}  // namespace gpuraid::daemon
