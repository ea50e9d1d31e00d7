#include "daemon/event_hook.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "daemon/convert.h"
#include "daemon/event_log.h"
#include "daemon/logging.h"
#include "daemon/prom_text.h"
#include "engine/thread_name.h"

extern char** environ;

namespace gpuraid::daemon {

namespace v1 = gpuraid::v1;

namespace {
constexpr size_t kMaxOutput = 4096;  // of a hook's output, logged

const char* severity(v1::EventKind k) {
  switch (k) {
    case v1::EVENT_KIND_GROUP_FAILED:
    case v1::EVENT_KIND_MEMBER_FAILED:
    case v1::EVENT_KIND_SPARE_FAILED:
    case v1::EVENT_KIND_READ_UNCORRECTABLE: return "critical";
    case v1::EVENT_KIND_MEMBER_MISSING:
    case v1::EVENT_KIND_READ_CORRECTED:
    case v1::EVENT_KIND_MISMATCH_FOUND:
    case v1::EVENT_KIND_BACKEND_SWITCHED:
    case v1::EVENT_KIND_EVENTS_SUPPRESSED: return "warning";
    default: return "info";
  }
}

}  // namespace

EventHook::EventHook(std::string command, size_t queue_max, std::chrono::milliseconds timeout)
    : cmd_(std::move(command)), queue_max_(queue_max), timeout_(timeout) {
  th_ = std::thread([this] { loop(); });
}

EventHook::~EventHook() {
  {
    std::lock_guard<std::mutex> g(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (th_.joinable()) th_.join();
}

void EventHook::offer(const v1::Event& e) {
  {
    std::lock_guard<std::mutex> g(mu_);
    if (stop_) return;
    if (queue_.size() >= queue_max_) {
      // Logged once per run of drops (rate-limited), counted always.
      dropped_++;
      log_limited(spdlog::level::warn, "event-hook-full", "event hook: {} events waiting, event {} ({}) not passed on",
                  queue_.size(), e.seq(), event_kind_word(e.kind()));
      return;
    }
    queue_.push_back(e);
  }
  cv_.notify_one();
}

void EventHook::loop() {
  set_thread_name("gpuraid-hook");
  std::unique_lock<std::mutex> g(mu_);
  for (;;) {
    cv_.wait(g, [&] { return stop_ || !queue_.empty(); });
    if (stop_) break;
    v1::Event e = std::move(queue_.front());
    queue_.pop_front();
    g.unlock();
    Result r = run(e);
    g.lock();
    results_[r]++;
  }
  if (!queue_.empty())
    spdlog::warn("event hook: {} events not passed on at shutdown (seq {}..{})", queue_.size(), queue_.front().seq(),
                 queue_.back().seq());
}

EventHook::Result EventHook::run(const v1::Event& e) {
  const std::string json = event_json(e);
  const std::string kind = event_kind_word(e.kind());
  std::vector<std::string> env_own = {
      "GPURAID_EVENT_KIND=" + kind,
      "GPURAID_EVENT_SEVERITY=" + std::string(severity(e.kind())),
      "GPURAID_EVENT_SEQ=" + std::to_string(e.seq()),
      "GPURAID_EVENT_TIME_MS=" + std::to_string(e.time_unix_ms()),
      "GPURAID_EVENT_GROUP=" + e.group(),
      "GPURAID_EVENT_VOLUME=" + e.volume(),
      "GPURAID_EVENT_DRIVE=" + e.drive(),
      "GPURAID_EVENT_MEMBER=" + (e.member() >= 0 ? std::to_string(e.member()) : std::string()),
      "GPURAID_EVENT_MESSAGE=" + e.message(),
  };
  std::vector<char*> envp;
  for (char** p = environ; *p; p++)
    if (strncmp(*p, "GPURAID_EVENT_", 14) != 0) envp.push_back(*p);
  for (auto& s : env_own) envp.push_back(s.data());
  envp.push_back(nullptr);

  int in[2], out[2];
  if (pipe2(in, O_CLOEXEC) != 0) {
    spdlog::error("event hook: pipe: {}", strerror(errno));
    return kNotRun;
  }
  if (pipe2(out, O_CLOEXEC) != 0) {
    spdlog::error("event hook: pipe: {}", strerror(errno));
    close(in[0]);
    close(in[1]);
    return kNotRun;
  }
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, in[0], 0);
  posix_spawn_file_actions_adddup2(&fa, out[1], 1);
  posix_spawn_file_actions_adddup2(&fa, out[1], 2);
  posix_spawnattr_t at;
  posix_spawnattr_init(&at);
  // Its own process group (killed whole on timeout); the daemon's blocked
  // signals and ignored SIGPIPE are not passed on.
  sigset_t none, dfl;
  sigemptyset(&none);
  sigemptyset(&dfl);
  sigaddset(&dfl, SIGPIPE);
  posix_spawnattr_setpgroup(&at, 0);
  posix_spawnattr_setsigmask(&at, &none);
  posix_spawnattr_setsigdefault(&at, &dfl);
  posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  const char* argv[] = {"/bin/sh", "-c", cmd_.c_str(), nullptr};
  pid_t pid = -1;
  int rc = posix_spawn(&pid, "/bin/sh", &fa, &at, const_cast<char* const*>(argv), envp.data());
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&at);
  close(in[0]);
  close(out[1]);
  if (rc != 0) {
    close(in[1]);
    close(out[0]);
    spdlog::error("event hook: cannot run /bin/sh: {}", strerror(rc));
    return kNotRun;
  }
  // Feed stdin and collect output without blocking past the deadline.
  fcntl(in[1], F_SETFL, O_NONBLOCK);
  fcntl(out[0], F_SETFL, O_NONBLOCK);
  size_t fed = 0;
  int in_fd = in[1], out_fd = out[0];
  std::string output;
  const auto deadline = std::chrono::steady_clock::now() + timeout_;
  int status = 0;
  bool exited = false, timed_out = false;
  while (!exited) {
    if (std::chrono::steady_clock::now() >= deadline) {
      kill(-pid, SIGKILL);
      timed_out = true;
      waitpid(pid, &status, 0);
      break;
    }
    pollfd fds[2];
    nfds_t n = 0;
    if (out_fd >= 0) fds[n++] = {out_fd, POLLIN, 0};
    if (in_fd >= 0) fds[n++] = {in_fd, POLLOUT, 0};
    ::poll(fds, n, 50);
    if (in_fd >= 0) {
      ssize_t w = write(in_fd, json.data() + fed, json.size() - fed);
      if (w > 0) fed += size_t(w);
      if (fed == json.size() || (w < 0 && errno != EAGAIN)) {
        close(in_fd);  // EOF for the hook (or it does not read: EPIPE)
        in_fd = -1;
      }
    }
    if (out_fd >= 0) {
      char buf[1024];
      ssize_t r;
      while ((r = read(out_fd, buf, sizeof buf)) > 0)
        if (output.size() < kMaxOutput) output.append(buf, size_t(std::min<ssize_t>(r, ssize_t(kMaxOutput - output.size()))));
      if (r == 0) {
        close(out_fd);
        out_fd = -1;
      }
    }
    exited = waitpid(pid, &status, WNOHANG) == pid;
  }
  if (in_fd >= 0) close(in_fd);
  if (out_fd >= 0) {
    char buf[1024];
    ssize_t r;
    while ((r = read(out_fd, buf, sizeof buf)) > 0 && output.size() < kMaxOutput)
      output.append(buf, size_t(std::min<ssize_t>(r, ssize_t(kMaxOutput - output.size()))));
    close(out_fd);
  }
  while (!output.empty() && output.back() == '\n') output.pop_back();
  const std::string what = "event hook for event " + std::to_string(e.seq()) + " (" + kind + ")";
  if (timed_out) {
    spdlog::error("{}: still running after {} ms: killed{}{}", what, timeout_.count(), output.empty() ? "" : "; output: ",
                  output);
    return kTimedOut;
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
    if (!output.empty()) spdlog::info("{}: {}", what, output);
    return kOk;
  }
  std::string how = WIFEXITED(status) ? "exited with " + std::to_string(WEXITSTATUS(status))
                                      : "killed by signal " + std::to_string(WTERMSIG(status));
  spdlog::error("{}: {}{}{}", what, how, output.empty() ? "" : "; output: ", output);
  return kFailed;
}

std::string EventHook::metrics_text(const EventHook* h) {
  // Zeros without a hook, so that dashboards and alert rules find the series.
  uint64_t results[kResults] = {}, dropped = 0, queued = 0;
  if (h) {
    std::lock_guard<std::mutex> g(h->mu_);
    std::copy(std::begin(h->results_), std::end(h->results_), results);
    dropped = h->dropped_;
    queued = h->queue_.size();
  }
  PromText p;
  p.family("event_hook_runs_total", "counter", "Event hook runs by result.");
  const char* names[kResults] = {"ok", "failed", "timeout", "not_run"};
  for (int i = 0; i < kResults; i++) p.sample("event_hook_runs_total", {{"result", names[i]}}, results[i]);
  p.family("event_hook_dropped_total", "counter", "Events not passed to the hook because its queue was full.");
  p.sample("event_hook_dropped_total", {}, dropped);
  p.family("event_hook_queued", "gauge", "Events waiting for the hook.");
  p.sample("event_hook_queued", {}, queued);
  return p.str();
}

}  // namespace gpuraid::daemon
