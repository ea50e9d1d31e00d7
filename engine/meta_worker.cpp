#include "engine/meta_worker.h"

#include "engine/thread_name.h"

namespace gpuraid {

MetaWorker::~MetaWorker() {
  {
    std::lock_guard<std::mutex> l(mu_);
    stop_ = true;
    cv_.notify_all();
  }
  if (thread_.joinable()) thread_.join();
}

void MetaWorker::post(std::function<void()> fn) {
  std::lock_guard<std::mutex> l(mu_);
  queue_.push_back(std::move(fn));
  posted_++;
  if (!thread_.joinable()) {
    thread_ = std::thread([this] { loop(); });
    id_ = thread_.get_id();
  }
  cv_.notify_all();
}

bool MetaWorker::on_worker() const {
  std::lock_guard<std::mutex> l(mu_);
  return thread_.joinable() && std::this_thread::get_id() == id_;
}

void MetaWorker::drain() {
  if (on_worker()) return;
  std::unique_lock<std::mutex> l(mu_);
  cv_.wait(l, [&] { return ran_ == posted_; });  // what the work posts in turn too
}

void MetaWorker::loop() {
  set_thread_name(name_.c_str());
  std::unique_lock<std::mutex> l(mu_);
  for (;;) {
    cv_.wait(l, [&] { return stop_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping, all ran
    std::function<void()> fn = std::move(queue_.front());
    queue_.pop_front();
    l.unlock();
    fn();
    l.lock();
    ran_++;
    cv_.notify_all();
  }
}

}  // namespace gpuraid
