// A thread that runs control-path work posted from reactors (persisting a
// member's failure, writing the write-intent bitmap), in order, so that a
// reactor never waits for metadata I/O. Started on first use.
#pragma once
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace gpuraid {

class MetaWorker {
 public:
  explicit MetaWorker(std::string thread_name) : name_(std::move(thread_name)) {}
  // Runs what is queued, then stops.
  ~MetaWorker();
  MetaWorker(const MetaWorker&) = delete;
  MetaWorker& operator=(const MetaWorker&) = delete;

  void post(std::function<void()> fn);
  // Waits until nothing is queued or running, including what the work
  // posted in turn (at once on the worker's own thread, which cannot wait
  // for itself).
  void drain();
  bool on_worker() const;

 private:
  void loop();
  std::string name_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> queue_;
  uint64_t posted_ = 0, ran_ = 0;
  bool stop_ = false;
  std::thread thread_;
  std::thread::id id_;
};

}  // namespace gpuraid
