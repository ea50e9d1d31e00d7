#include "daemon/nvme_sysfs.h"

#include <dirent.h>

#include <algorithm>
#include <fstream>
#include <regex>

namespace gpuraid::daemon {

namespace {

std::string read_attr(const std::string& path) {
  std::ifstream f(path);
  std::string s;
  std::getline(f, s);
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ' || s.back() == '\0')) s.pop_back();
  return s;
}

std::vector<std::string> entries(const std::string& dir) {
  std::vector<std::string> out;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d))
      if (e->d_name[0] != '.') out.emplace_back(e->d_name);
    closedir(d);
  }
  std::sort(out.begin(), out.end());
  return out;
}

// "traddr=127.0.0.1,trsvcid=4420,src_addr=..." -> the value of key.
std::string address_field(const std::string& addr, const std::string& key) {
  size_t at = 0;
  while (at < addr.size()) {
    size_t end = addr.find(',', at);
    if (end == std::string::npos) end = addr.size();
    const std::string kv = addr.substr(at, end - at);
    if (kv.compare(0, key.size() + 1, key + "=") == 0) return kv.substr(key.size() + 1);
    at = end + 1;
  }
  return "";
}

}  // namespace

const char* path_state_name(PathState s) {
  switch (s) {
    case PathState::Live: return "live";
    case PathState::Reconnecting: return "reconnecting";
    case PathState::Gone: return "gone";
  }
  return "?";
}

std::vector<NvmeCtrl> nvme_controllers(const std::string& sys) {
  static const std::regex ctrl_name("nvme[0-9]+");
  std::vector<NvmeCtrl> out;
  const std::string base = sys + "/class/nvme/";
  for (const std::string& n : entries(base)) {
    if (!std::regex_match(n, ctrl_name)) continue;
    NvmeCtrl c;
    c.name = n;
    c.state = read_attr(base + n + "/state");
    c.transport = read_attr(base + n + "/transport");
    c.address = read_attr(base + n + "/address");
    c.subsysnqn = read_attr(base + n + "/subsysnqn");
    out.push_back(c);
  }
  return out;
}

bool ctrl_serves(const NvmeCtrl& c, const FabricsPath& p) {
  return c.transport == p.transport && c.subsysnqn == p.nqn && address_field(c.address, "traddr") == p.traddr &&
         address_field(c.address, "trsvcid") == p.trsvcid;
}

PathState path_state(const FabricsPath& p, const std::string& sys) {
  bool reconnecting = false;
  for (const NvmeCtrl& c : nvme_controllers(sys)) {
    if (!ctrl_serves(c, p)) continue;
    if (c.state == "live") return PathState::Live;
    if (c.state == "connecting" || c.state == "resetting" || c.state == "new") reconnecting = true;
  }
  return reconnecting ? PathState::Reconnecting : PathState::Gone;
}

std::vector<std::string> subsystem_namespaces(const std::string& nqn, const std::string& sys) {
  static const std::regex head("nvme[0-9]+n[0-9]+");
  std::vector<std::string> out;
  const std::string base = sys + "/class/nvme-subsystem/";
  for (const std::string& s : entries(base)) {
    if (read_attr(base + s + "/subsysnqn") != nqn) continue;
    for (const std::string& e : entries(base + s))
      if (std::regex_match(e, head)) out.push_back("/dev/" + e);
    if (!out.empty()) return out;
    // Without multipath the namespaces hang off the controllers.
    for (const std::string& e : entries(base + s)) {
      if (!std::regex_match(e, std::regex("nvme[0-9]+"))) continue;
      for (const std::string& ns : entries(base + s + "/" + e))
        if (std::regex_match(ns, head)) out.push_back("/dev/" + ns);
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace gpuraid::daemon
