#include "daemon/frontends/frontend_log.h"

#include <atomic>
#include <cstdarg>
#include <cstdio>
#include <string>

namespace gpuraid {

static std::atomic<FrontendLogSink> g_sink{nullptr};

void set_frontend_log_sink(FrontendLogSink sink) { g_sink.store(sink, std::memory_order_release); }

void frontend_log(const char* fmt, ...) {
  va_list ap, ap2;
  va_start(ap, fmt);
  va_copy(ap2, ap);
  const int n = vsnprintf(nullptr, 0, fmt, ap);
  va_end(ap);
  std::string line(n > 0 ? size_t(n) : 0, '\0');
  if (n > 0) vsnprintf(line.data(), line.size() + 1, fmt, ap2);
  va_end(ap2);
  while (!line.empty() && line.back() == '\n') line.pop_back();
  if (FrontendLogSink s = g_sink.load(std::memory_order_acquire))
    s(line.c_str());
  else
    fprintf(stderr, "%s\n", line.c_str());
}

}  // namespace gpuraid
