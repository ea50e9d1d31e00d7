#pragma once
// The rate a background task (rebuild, resync, init, scrub) makes progress
// at, as `gpuraid status` shows it: the bytes of its progress steps of the
// last 30 s (from the last step at least that old) over their time, so that
// a slow, coarse task (a 1K/s limit moves one 64 KiB strip a minute) shows
// its real rate between steps and not 0; once the next step is overdue (it
// takes longer than the steps measured), the time waited counts too, and a
// task that stopped moving decays towards 0.
#include <atomic>
#include <cstdint>
#include <deque>

namespace gpuraid {

class ProgressRate {
 public:
  static constexpr uint64_t kWindowNs = 30'000'000'000ull;

  // One look at the task's bytes done (the housekeeper's thread only).
  void sample(uint64_t now_ns, uint64_t done) {
    if (!steps_.empty() && done < steps_.back().done) steps_.clear();  // a new run of the task
    if (steps_.empty() || done != steps_.back().done) steps_.push_back({now_ns, done});
    while (steps_.size() > 2 && now_ns - steps_[1].t_ns >= kWindowNs) steps_.pop_front();
    const Step &from = steps_.front(), &last = steps_.back();
    const bool overdue = now_ns - last.t_ns > last.t_ns - from.t_ns;
    const uint64_t until = overdue ? now_ns : last.t_ns;
    bytes_s_ = until > from.t_ns ? double(last.done - from.done) / (double(until - from.t_ns) / 1e9) : 0.0;
  }
  double bytes_s() const { return bytes_s_; }
  // Seconds left at this rate; 0 when unknown (no measurable rate).
  double eta_s(uint64_t left_bytes) const {
    const double r = bytes_s_;
    return r >= 1.0 ? double(left_bytes) / r : 0.0;
  }

 private:
  struct Step {
    uint64_t t_ns, done;
  };
  std::deque<Step> steps_;
  std::atomic<double> bytes_s_{0};
};

}  // namespace gpuraid
