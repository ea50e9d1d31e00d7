#include "daemon/sysinfo.h"

#include <dirent.h>
#include <liburing.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

namespace gpuraid::daemon {

void kernel_features(gpuraid::v1::KernelFeatures* out) {
  utsname u;
  if (uname(&u) == 0) out->set_kernel_release(u.release);
  io_uring ring;
  bool uring = io_uring_queue_init(2, &ring, 0) == 0;
  if (uring) io_uring_queue_exit(&ring);
  out->set_io_uring(uring);
  out->set_ublk(access("/dev/ublk-control", F_OK) == 0);
  out->set_nbd_client(access("/dev/nbd0", F_OK) == 0);
}

namespace {
std::string trim(std::string s) {
  while (!s.empty() && isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  size_t i = 0;
  while (i < s.size() && isspace(static_cast<unsigned char>(s[i]))) i++;
  return s.substr(i);
}

// "name, memory MiB" lines from nvidia-smi, if it is installed.
std::vector<std::pair<std::string, uint64_t>> smi() {
  std::vector<std::pair<std::string, uint64_t>> out;
  if (access("/usr/bin/nvidia-smi", X_OK) != 0) return out;
  FILE* p = popen("/usr/bin/nvidia-smi --query-gpu=name,memory.total --format=csv,noheader,nounits 2>/dev/null", "r");
  if (!p) return out;
  char line[512];
  while (fgets(line, sizeof line, p)) {
    std::string s = line;
    size_t c = s.rfind(',');
    if (c == std::string::npos) continue;
    out.emplace_back(trim(s.substr(0, c)), strtoull(s.c_str() + c + 1, nullptr, 10) << 20);
  }
  pclose(p);
  return out;
}
}  // namespace

void gpu_info(gpuraid::v1::DaemonInfo* out) {
  std::string driver;
  {
    std::ifstream v("/proc/driver/nvidia/version");
    std::getline(v, driver);
  }
  auto list = smi();
  if (!list.empty()) {
    for (auto& [name, mem] : list) {
      auto* g = out->add_gpus();
      g->set_model(name);
      g->set_memory_bytes(mem);
      g->set_driver(trim(driver));
    }
    return;
  }
  DIR* d = opendir("/proc/driver/nvidia/gpus");
  if (!d) return;
  while (dirent* e = readdir(d)) {
    if (e->d_name[0] == '.') continue;
    std::ifstream f(std::string("/proc/driver/nvidia/gpus/") + e->d_name + "/information");
    std::string line;
    while (std::getline(f, line))
      if (line.rfind("Model:", 0) == 0) {
        auto* g = out->add_gpus();
        g->set_model(trim(line.substr(6)));
        g->set_driver(trim(driver));
      }
  }
  closedir(d);
}

}  // namespace gpuraid::daemon
