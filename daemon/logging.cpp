#include "daemon/logging.h"

#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_sinks.h>

#include <chrono>
#include <cstdlib>
#include <mutex>
#include <unordered_map>

namespace gpuraid::daemon {

namespace {
std::mutex g_mu;
std::string g_file;

std::shared_ptr<spdlog::logger> make_logger(const std::string& file) {
  std::shared_ptr<spdlog::logger> l;
  if (file.empty()) {
    l = spdlog::stderr_logger_mt("gpuraidd-" + std::to_string(rand()));
    // Under systemd (JOURNAL_STREAM set) the journal stamps lines itself.
    l->set_pattern(getenv("JOURNAL_STREAM") ? "<%l> %v" : "%Y-%m-%d %H:%M:%S.%e %l %v");
  } else {
    l = spdlog::basic_logger_mt("gpuraidd-" + std::to_string(rand()), file);
    l->set_pattern("%Y-%m-%d %H:%M:%S.%e %l %v");
  }
  l->flush_on(spdlog::level::info);
  return l;
}
}  // namespace

bool setup_logging(const std::string& file, const std::string& level, std::string* err) {
  auto lvl = spdlog::level::from_str(level);
  if (lvl == spdlog::level::off && level != "off") {
    *err = "unknown log level '" + level + "' (trace, debug, info, warn, error)";
    return false;
  }
  try {
    auto l = make_logger(file);
    std::lock_guard<std::mutex> g(g_mu);
    g_file = file;
    spdlog::set_default_logger(l);
    spdlog::set_level(lvl);
  } catch (const spdlog::spdlog_ex& ex) {
    *err = std::string("cannot open the log: ") + ex.what();
    return false;
  }
  return true;
}

void reopen_logs() {
  std::lock_guard<std::mutex> g(g_mu);
  if (g_file.empty()) return;
  try {
    auto lvl = spdlog::get_level();
    auto old = spdlog::default_logger();
    spdlog::set_default_logger(make_logger(g_file));
    spdlog::set_level(lvl);
    spdlog::drop(old->name());
    spdlog::info("log reopened (SIGHUP)");
  } catch (const spdlog::spdlog_ex& ex) {
    spdlog::error("cannot reopen the log {}: {}", g_file, ex.what());
  }
}

bool log_allowed(const std::string& key, uint64_t* suppressed) {
  struct Slot {
    std::chrono::steady_clock::time_point last;
    uint64_t dropped = 0;
  };
  static std::mutex mu;
  static std::unordered_map<std::string, Slot> slots;
  auto now = std::chrono::steady_clock::now();
  std::lock_guard<std::mutex> g(mu);
  if (slots.size() > 10000) slots.clear();  // bounded however many keys appear
  auto [it, fresh] = slots.try_emplace(key);
  if (!fresh && now - it->second.last < std::chrono::seconds(5)) {
    it->second.dropped++;
    return false;
  }
  it->second.last = now;
  *suppressed = it->second.dropped;
  it->second.dropped = 0;
  return true;
}

}  // namespace gpuraid::daemon
