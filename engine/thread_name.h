// Names the calling thread (/proc/PID/task/TID/comm, 15 characters at most),
// so that every thread gpuraidd starts is told apart from the library pools
// (gRPC's elastic executor/poller threads, io_uring's iou-wrk workers) by
// ps, perf and the VM lane's resource checks.
#pragma once
#include <pthread.h>

#include <string>

namespace gpuraid {

inline void set_thread_name(const std::string& name) {
  pthread_setname_np(pthread_self(), name.substr(0, 15).c_str());
}

}  // namespace gpuraid
