// nvmet through configfs: plans (what to create or remove, from what is
// there now) and their application. See nvmet_config.h.
#include "daemon/nvmet_config.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

namespace gpuraid::daemon {

namespace {

bool path_exists(const std::string& p) {
  struct stat st;
  return lstat(p.c_str(), &st) == 0;
}

// An attribute's text without the trailing newline ("" when unreadable).
std::string read_attr(const std::string& p) {
  std::ifstream f(p);
  std::string s;
  std::getline(f, s);
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

std::vector<std::string> entries(const std::string& dir) {
  std::vector<std::string> out;
  DIR* d = opendir(dir.c_str());
  if (!d) return out;
  while (dirent* e = readdir(d))
    if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) out.push_back(e->d_name);
  closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

uint64_t fnv1a(const std::string& s, uint64_t seed) {
  uint64_t h = 1469598103934665603ull ^ seed;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h ^ (h >> 29);
}

// 16 bytes from two hashes of `s`, formatted 8-4-4-4-12 (RFC 9562 version 8,
// custom: the bytes are ours).
std::string uuid_from(const std::string& s, uint64_t seed) {
  uint64_t a = fnv1a(s, seed), b = fnv1a(s, seed * 31 + 7);
  a = (a & ~0xf000ull) | 0x8000ull;                  // version 8
  b = (b & ~(3ull << 62)) | (2ull << 62);            // variant 10
  char buf[40];
  snprintf(buf, sizeof buf, "%08x-%04x-%04x-%04x-%012llx", unsigned(a >> 32), unsigned((a >> 16) & 0xffff),
           unsigned(a & 0xffff), unsigned(b >> 48), (unsigned long long)(b & 0xffffffffffffull));
  return buf;
}

std::string errno_text(const std::string& what, const std::string& path) {
  return what + " " + path + ": " + strerror(errno);
}

// `shown`: what an error message calls the value (a secret is never shown).
bool write_attr(const std::string& p, const std::string& v, const std::string& shown, std::string* err) {
  int fd = ::open(p.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return *err = errno_text("cannot open", p), false;
  ssize_t n = ::write(fd, v.data(), v.size());
  int e = errno;
  ::close(fd);
  errno = e;
  if (n != ssize_t(v.size())) return *err = errno_text("cannot write " + shown + " to", p), false;
  return true;
}

bool run_op(const NvmetOp& op, std::string* err) {
  switch (op.kind) {
    case NvmetOp::Mkdir:
      if (mkdir(op.path.c_str(), 0755) != 0) return *err = errno_text("cannot create", op.path), false;
      return true;
    case NvmetOp::Rmdir:
      if (rmdir(op.path.c_str()) != 0) return *err = errno_text("cannot remove", op.path), false;
      return true;
    case NvmetOp::Write:
      if (!op.secret) return write_attr(op.path, op.value, op.value, err);
      if (write_attr(op.path, op.value, "the DH-HMAC-CHAP key", err)) return true;
      if (errno == ENOENT) *err += " (this kernel's NVMe target has no DH-HMAC-CHAP: CONFIG_NVME_TARGET_AUTH)";
      return false;
    case NvmetOp::Symlink:
      if (symlink(op.value.c_str(), op.path.c_str()) != 0) return *err = errno_text("cannot link", op.path), false;
      return true;
    case NvmetOp::Unlink:
      if (unlink(op.path.c_str()) != 0) return *err = errno_text("cannot unlink", op.path), false;
      return true;
  }
  return false;
}

// The operation that takes `op` back (best effort: a removed directory
// comes back without its attributes); false when there is none (writes).
bool inverse(const NvmetOp& op, NvmetOp* out) {
  switch (op.kind) {
    case NvmetOp::Mkdir: *out = {NvmetOp::Rmdir, op.path, ""}; return true;
    case NvmetOp::Rmdir: *out = {NvmetOp::Mkdir, op.path, ""}; return true;
    case NvmetOp::Symlink: *out = {NvmetOp::Unlink, op.path, op.value}; return true;
    case NvmetOp::Unlink: *out = {NvmetOp::Symlink, op.path, op.value}; return true;
    case NvmetOp::Write: return false;
  }
  return false;
}

}  // namespace

void nvmet_identity(const std::string& group_uuid, const std::string& vd, NvmetExport* x) {
  const std::string key = group_uuid + "/" + vd;
  x->uuid = uuid_from(key, 1);
  x->nguid = uuid_from(key, 2);
  char buf[24];
  snprintf(buf, sizeof buf, "%016llx", (unsigned long long)fnv1a(key, 3));
  x->serial = buf;
}

std::string Nvmet::unavailable() const {
  if (path_exists(root_)) return "";
  if (root_ == kNvmetRoot) {
    if (!path_exists("/sys/kernel/config"))
      return "configfs is not mounted: mount -t configfs none /sys/kernel/config (and modprobe nvmet)";
    return "the kernel's NVMe target is not loaded: modprobe nvmet";
  }
  return root_ + " does not exist: the kernel's NVMe target is not there (modprobe nvmet)";
}

std::string Nvmet::transport_missing(const std::string& trtype) {
  std::string mod = "nvmet_" + trtype;
  if (path_exists("/sys/module/" + mod)) return "";
  return "modprobe nvmet-" + trtype;
}

bool Nvmet::subsystem_exists(const std::string& nqn) const { return path_exists(root_ + "/subsystems/" + nqn); }

std::string Nvmet::find_port(const std::string& trtype, const std::string& traddr, const std::string& trsvcid) const {
  for (const auto& id : entries(root_ + "/ports")) {
    const std::string p = root_ + "/ports/" + id;
    if (read_attr(p + "/addr_trtype") == trtype && read_attr(p + "/addr_traddr") == traddr &&
        read_attr(p + "/addr_trsvcid") == trsvcid)
      return id;
  }
  return "";
}

std::vector<std::string> Nvmet::port_subsystems(const std::string& id) const {
  return entries(root_ + "/ports/" + id + "/subsystems");
}

std::vector<std::string> Nvmet::host_users(const std::string& nqn) const {
  std::vector<std::string> out;
  for (const auto& s : entries(root_ + "/subsystems"))
    if (path_exists(root_ + "/subsystems/" + s + "/allowed_hosts/" + nqn)) out.push_back(s);
  return out;
}

bool Nvmet::plan_create(const NvmetExport& x, NvmetOwned* owned, std::vector<NvmetOp>* ops, std::string* err) const {
  const std::string sub = root_ + "/subsystems/" + x.nqn;
  const std::string ns = sub + "/namespaces/" + std::to_string(kNvmetNsid);
  auto add = [ops](NvmetOp::Kind k, std::string p, std::string v = "") { ops->push_back({k, std::move(p), std::move(v)}); };
  const bool new_sub = !path_exists(sub);
  if (new_sub) {
    add(NvmetOp::Mkdir, sub);
    add(NvmetOp::Write, sub + "/attr_serial", x.serial);
  }
  // Before the host links: the kernel refuses allowed hosts while any host is allowed.
  const std::string any = x.allow_any_host ? "1" : "0";
  if (new_sub || read_attr(sub + "/attr_allow_any_host") != any) add(NvmetOp::Write, sub + "/attr_allow_any_host", any);
  if (new_sub || !path_exists(ns)) {
    add(NvmetOp::Mkdir, ns);
    add(NvmetOp::Write, ns + "/device_path", x.device_path);
    add(NvmetOp::Write, ns + "/device_uuid", x.uuid);
    add(NvmetOp::Write, ns + "/device_nguid", x.nguid);
    add(NvmetOp::Write, ns + "/enable", "1");
  } else {
    const std::string dev = read_attr(ns + "/device_path");
    if (dev != x.device_path) {
      *err = "subsystem " + x.nqn + " already serves " + (dev.empty() ? "another device" : dev) + ", not " +
             x.device_path;
      return false;
    }
    if (read_attr(ns + "/enable") != "1") add(NvmetOp::Write, ns + "/enable", "1");
  }
  for (const auto& h : x.hosts) {
    const std::string hp = root_ + "/hosts/" + h;
    const bool ours = std::find(owned->hosts_created.begin(), owned->hosts_created.end(), h) != owned->hosts_created.end();
    const bool new_host = !path_exists(hp);
    if (new_host) {
      add(NvmetOp::Mkdir, hp);
      if (!ours) owned->hosts_created.push_back(h);
    }
    if (!x.dhchap_key.empty() && (new_host || read_attr(hp + "/dhchap_key") != x.dhchap_key)) {
      if (!new_host && !ours) {
        *err = "host " + h + " is already set up on this host's NVMe target (for another subsystem) " +
               (read_attr(hp + "/dhchap_key").empty() ? "without a DH-HMAC-CHAP key" : "with another DH-HMAC-CHAP key") +
               ": nvmet keeps the key per host, so a key here would change how " + h +
               " authenticates to the other subsystems; give the key it has, or export without --dhchap-secret";
        return false;
      }
      ops->push_back({NvmetOp::Write, hp + "/dhchap_key", x.dhchap_key, true});
    }
    if (!path_exists(sub + "/allowed_hosts/" + h)) add(NvmetOp::Symlink, sub + "/allowed_hosts/" + h, hp);
  }
  std::string id = find_port(x.trtype, x.traddr, x.trsvcid);
  if (id.empty()) {
    // A port the daemon made before keeps its id (after a reboot); else the next free number.
    id = owned->port_created ? owned->port_id : "";
    if (!id.empty() && path_exists(root_ + "/ports/" + id)) {
      *err = "port " + id + " of " + root_ + "/ports now has another address: not reused";
      return false;
    }
    if (id.empty()) {
      unsigned long top = 0;
      for (const auto& e : entries(root_ + "/ports")) top = std::max(top, strtoul(e.c_str(), nullptr, 10));
      id = std::to_string(top + 1);
    }
    const std::string p = root_ + "/ports/" + id;
    add(NvmetOp::Mkdir, p);
    add(NvmetOp::Write, p + "/addr_trtype", x.trtype);
    add(NvmetOp::Write, p + "/addr_adrfam", x.adrfam);
    add(NvmetOp::Write, p + "/addr_traddr", x.traddr);
    add(NvmetOp::Write, p + "/addr_trsvcid", x.trsvcid);
    owned->port_created = true;
  } else if (id != owned->port_id) {
    owned->port_created = false;  // someone else's port (or one we made and lost track of): never removed by us
  }
  owned->port_id = id;
  const std::string link = root_ + "/ports/" + id + "/subsystems/" + x.nqn;
  if (!path_exists(link)) add(NvmetOp::Symlink, link, sub);  // enables the port (the kernel starts listening)
  return true;
}

std::vector<NvmetOp> Nvmet::plan_remove(const std::string& nqn, const NvmetOwned& owned) const {
  std::vector<NvmetOp> ops;
  const std::string sub = root_ + "/subsystems/" + nqn;
  // Links to the subsystem from any port (the kernel needs them gone first).
  for (const auto& id : entries(root_ + "/ports")) {
    const std::string link = root_ + "/ports/" + id + "/subsystems/" + nqn;
    if (path_exists(link)) ops.push_back({NvmetOp::Unlink, link, sub});
  }
  if (path_exists(sub)) {
    for (const auto& h : entries(sub + "/allowed_hosts"))
      ops.push_back({NvmetOp::Unlink, sub + "/allowed_hosts/" + h, root_ + "/hosts/" + h});
    for (const auto& n : entries(sub + "/namespaces")) ops.push_back({NvmetOp::Rmdir, sub + "/namespaces/" + n, ""});
    ops.push_back({NvmetOp::Rmdir, sub, ""});
  }
  if (owned.port_created && !owned.port_id.empty() && path_exists(root_ + "/ports/" + owned.port_id)) {
    auto users = port_subsystems(owned.port_id);
    users.erase(std::remove(users.begin(), users.end(), nqn), users.end());
    if (users.empty()) ops.push_back({NvmetOp::Rmdir, root_ + "/ports/" + owned.port_id, ""});
  }
  for (const auto& h : owned.hosts_created) {
    if (!path_exists(root_ + "/hosts/" + h)) continue;
    auto users = host_users(h);
    users.erase(std::remove(users.begin(), users.end(), nqn), users.end());
    if (users.empty()) ops.push_back({NvmetOp::Rmdir, root_ + "/hosts/" + h, ""});
  }
  return ops;
}

bool Nvmet::apply(const std::vector<NvmetOp>& ops, std::string* err) {
  for (size_t i = 0; i < ops.size(); i++) {
    if (run_op(ops[i], err)) continue;
    for (size_t j = i; j-- > 0;) {
      NvmetOp back;
      std::string ignored;  // the first error is the one to report
      if (inverse(ops[j], &back)) run_op(back, &ignored);
    }
    return false;
  }
  return true;
}

bool Nvmet::serves(const std::string& nqn, const std::string& device_path) const {
  const std::string ns = root_ + "/subsystems/" + nqn + "/namespaces/" + std::to_string(kNvmetNsid);
  return read_attr(ns + "/device_path") == device_path && read_attr(ns + "/enable") == "1";
}

namespace {
// "0100007F:1144" (little-endian IPv4 as /proc/net/tcp prints it) -> address, port.
bool parse_proc_addr(const std::string& s, bool v6, std::string* addr, unsigned* port) {
  size_t c = s.find(':');
  if (c == std::string::npos) return false;
  *port = unsigned(strtoul(s.c_str() + c + 1, nullptr, 16));
  const std::string hex = s.substr(0, c);
  unsigned char b[16];
  size_t n = v6 ? 16 : 4;
  if (hex.size() != n * 2) return false;
  for (size_t w = 0; w < n / 4; w++)  // each 32-bit word is printed in host (little-endian) order
    for (size_t k = 0; k < 4; k++) b[w * 4 + k] = uint8_t(strtoul(hex.substr(w * 8 + (3 - k) * 2, 2).c_str(), nullptr, 16));
  char buf[INET6_ADDRSTRLEN];
  if (!inet_ntop(v6 ? AF_INET6 : AF_INET, b, buf, sizeof buf)) return false;
  *addr = buf;
  return true;
}
}  // namespace

std::vector<NvmetHost> Nvmet::connected(const std::string& nqn, const NvmetExport& x) const {
  std::vector<NvmetHost> out;
  // Kernels with CONFIG_NVME_TARGET_DEBUGFS: one directory per controller.
  const std::string dbg = debugfs_ + "/" + nqn;
  if (path_exists(dbg)) {
    for (const auto& c : entries(dbg)) {
      if (c.rfind("ctrl", 0) != 0) continue;
      out.push_back({read_attr(dbg + "/" + c + "/hostnqn"), read_attr(dbg + "/" + c + "/host_traddr"),
                     read_attr(dbg + "/" + c + "/state")});
    }
    return out;
  }
  // Otherwise the established TCP connections to the port, by peer (a
  // controller has one per queue; a shared port also carries other subsystems).
  if (x.trtype != "tcp") return out;
  std::map<std::string, int> peers;
  for (bool v6 : {false, true}) {
    std::ifstream f(proc_net_ + (v6 ? "/tcp6" : "/tcp"));
    std::string line;
    std::getline(f, line);
    while (std::getline(f, line)) {
      std::istringstream in(line);
      std::string sl, local, remote, st;
      in >> sl >> local >> remote >> st;
      std::string la, ra;
      unsigned lp = 0, rp = 0;
      if (st != "01" || !parse_proc_addr(local, v6, &la, &lp) || !parse_proc_addr(remote, v6, &ra, &rp)) continue;
      if (std::to_string(lp) == x.trsvcid) peers[ra]++;
    }
  }
  for (const auto& [addr, n] : peers)
    out.push_back({"", addr, std::to_string(n) + " TCP connection" + (n == 1 ? "" : "s")});
  return out;
}

std::string nvmet_probe_listen(const std::string& adrfam, const std::string& traddr, const std::string& trsvcid) {
  const bool v6 = adrfam == "ipv6";
  sockaddr_storage ss{};
  socklen_t len;
  const uint16_t port = htons(uint16_t(strtoul(trsvcid.c_str(), nullptr, 10)));
  if (v6) {
    auto* a = reinterpret_cast<sockaddr_in6*>(&ss);
    a->sin6_family = AF_INET6;
    a->sin6_port = port;
    if (inet_pton(AF_INET6, traddr.c_str(), &a->sin6_addr) != 1) return traddr + " is not an IPv6 address";
    len = sizeof *a;
  } else {
    auto* a = reinterpret_cast<sockaddr_in*>(&ss);
    a->sin_family = AF_INET;
    a->sin_port = port;
    if (inet_pton(AF_INET, traddr.c_str(), &a->sin_addr) != 1) return traddr + " is not an IPv4 address";
    len = sizeof *a;
  }
  int fd = socket(v6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return std::string("cannot make a socket: ") + strerror(errno);
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);  // as nvmet-tcp does: TIME_WAIT is no conflict
  if (v6) setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
  std::string why;
  if (bind(fd, reinterpret_cast<sockaddr*>(&ss), len) != 0) {
    const std::string at = (v6 ? "[" + traddr + "]" : traddr) + ":" + trsvcid;
    if (errno == EADDRINUSE) why = at + " is in use by another application (or another target port)";
    else if (errno == EADDRNOTAVAIL) why = traddr + " is not an address of this host";
    else why = "cannot listen on " + at + ": " + strerror(errno);
  }
  ::close(fd);
  return why;
}

}  // namespace gpuraid::daemon
