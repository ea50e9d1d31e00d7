#include "nvme/probe.h"

#include <dirent.h>
#include <fcntl.h>
// libnvme 1.3's headers declare C functions without extern "C".
extern "C" {
#include <nvme/ioctl.h>
}
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <fstream>
#include <regex>

#include "nvme/parse.h"

namespace gpuraid::nvme {

namespace {
struct Fd {
  int fd;
  explicit Fd(int f) : fd(f) {}
  ~Fd() { if (fd >= 0) close(fd); }
};

std::string read_line(const std::string& path) {
  std::ifstream f(path);
  std::string s;
  std::getline(f, s);
  return s;
}

std::string base_of_link(const std::string& path) {
  char buf[PATH_MAX];
  if (!realpath(path.c_str(), buf)) return "";
  std::string s(buf);
  return s.substr(s.rfind('/') + 1);
}

// The controller (nvmeX) of a namespace: its parent, or for a multipath
// head (parent: the subsystem) the controller of its first path.
std::string controller_of(const std::string& name) {
  const std::string sys = "/sys/block/" + name;
  if (access((sys + "/device/transport").c_str(), R_OK) == 0) return base_of_link(sys + "/device");
  std::vector<std::string> paths;
  if (DIR* d = opendir((sys + "/multipath").c_str())) {
    while (dirent* e = readdir(d))
      if (e->d_name[0] != '.') paths.push_back(e->d_name);
    closedir(d);
  }
  std::sort(paths.begin(), paths.end());
  for (const auto& p : paths) {
    std::string c = base_of_link(sys + "/multipath/" + p + "/device");
    if (!c.empty()) return c;
  }
  return "";
}

// CAP.MPSMIN in bytes, 0 when CAP cannot be read: PCIe from BAR 0 (as
// nvme-cli's show-regs), fabrics through Property Get.
uint32_t read_mpsmin(const std::string& ctrl, const std::string& transport) {
  if (ctrl.empty()) return 0;
  if (transport == "pcie") {
    Fd f(open(("/sys/class/nvme/" + ctrl + "/device/resource0").c_str(), O_RDONLY | O_CLOEXEC));
    if (f.fd < 0) return 0;
    void* p = mmap(nullptr, 4096, PROT_READ, MAP_SHARED, f.fd, 0);
    if (p == MAP_FAILED) return 0;
    const volatile uint32_t* r = static_cast<const volatile uint32_t*>(p);
    uint64_t cap = uint64_t(r[0]) | uint64_t(r[1]) << 32;
    munmap(p, 4096);
    return cap == ~0ull ? 0 : cap_mpsmin_bytes(cap);
  }
  Fd f(open(("/dev/" + ctrl).c_str(), O_RDONLY | O_CLOEXEC));
  if (f.fd < 0) return 0;
  __u64 cap = 0;
  nvme_get_property_args a{};
  a.value = &cap;
  a.args_size = sizeof(a);
  a.fd = f.fd;
  a.timeout = NVME_DEFAULT_IOCTL_TIMEOUT;
  a.offset = NVME_REG_CAP;
  return nvme_get_property(&a) == 0 ? cap_mpsmin_bytes(cap) : 0;
}

std::string status_text(int rc) {
  if (rc < 0) return strerror(errno);
  return "NVMe status 0x" + [rc] {
    char b[16];
    snprintf(b, sizeof(b), "%x", rc);
    return std::string(b);
  }();
}
}  // namespace

std::string block_name(const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0 || !S_ISBLK(st.st_mode)) return "";
  return base_of_link("/sys/dev/block/" + std::to_string(major(st.st_rdev)) + ":" + std::to_string(minor(st.st_rdev)));
}

bool is_namespace_name(const std::string& name) {
  static const std::regex re("nvme[0-9]+n[0-9]+");
  return std::regex_match(name, re);
}

Probe probe(const std::string& path, Identity* out, std::string* err) {
  const std::string name = block_name(path);
  if (!is_namespace_name(name)) return Probe::NotNvme;
  *out = Identity{};
  out->block_path = "/dev/" + name;
  std::string ng = "/dev/ng" + name.substr(4);
  struct stat st;
  if (stat(ng.c_str(), &st) == 0 && S_ISCHR(st.st_mode)) out->char_path = ng;
  out->controller = controller_of(name);
  if (!out->controller.empty()) out->transport = read_line("/sys/class/nvme/" + out->controller + "/transport");
  Fd f(open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (f.fd < 0) {
    *err = "cannot open " + path + ": " + strerror(errno);
    return Probe::Error;
  }
  __u32 nsid = 0;
  if (nvme_get_nsid(f.fd, &nsid) != 0) {
    *err = "cannot get the namespace id of " + path + ": " + strerror(errno);
    return Probe::Error;
  }
  out->nsid = nsid;
  struct nvme_id_ctrl c;
  struct nvme_id_ns ns;
  if (int rc = nvme_identify_ctrl(f.fd, &c); rc != 0) {
    *err = "Identify Controller through " + path + " failed: " + status_text(rc);
    return Probe::Error;
  }
  if (int rc = nvme_identify_ns(f.fd, nsid, &ns); rc != 0) {
    *err = "Identify Namespace " + std::to_string(nsid) + " of " + path + " failed: " + status_text(rc);
    return Probe::Error;
  }
  parse_ctrl(c, read_mpsmin(out->controller, out->transport), out);
  parse_ns(ns, out);
  return Probe::Ok;
}

ScanResult scan() {
  ScanResult r;
  std::vector<std::string> names;
  if (DIR* d = opendir("/sys/block")) {
    while (dirent* e = readdir(d))
      if (is_namespace_name(e->d_name)) names.push_back(e->d_name);
    closedir(d);
  }
  // nvme2n1 before nvme10n1.
  auto key = [](const std::string& n) {
    unsigned a = 0, b = 0;
    sscanf(n.c_str(), "nvme%un%u", &a, &b);
    return std::make_pair(a, b);
  };
  std::sort(names.begin(), names.end(), [&](const auto& x, const auto& y) { return key(x) < key(y); });
  for (const auto& n : names) {
    Identity id;
    std::string err;
    Probe p = probe("/dev/" + n, &id, &err);
    if (p == Probe::Ok) r.namespaces.push_back(std::move(id));
    else r.errors.push_back(p == Probe::Error ? err : "/dev/" + n + " has no device node");
  }
  return r;
}

}  // namespace gpuraid::nvme
