// The kernel's NVMe-oF target (nvmet), driven through configfs, for
// `vd export --nvmf`. gpuraid writes no target: it creates a subsystem with
// one namespace over the VD's /dev/ublkbN, links it to a port (an existing
// one with the same address is reused) and allows the listed hosts.
//
// Ownership: everything the daemon created is recorded (NvmetOwned, kept in
// the registry), and removal takes away exactly that: the subsystem and its
// namespace and links always; a port or host entry only when the daemon made
// it and no other subsystem uses it now. Other subsystems are never touched.
//
// Changes are planned first (a list of configfs operations, computed from
// what is there now: testable on a plain directory), then applied; a failed
// step undoes the steps before it.
#pragma once
#include <string>
#include <vector>

namespace gpuraid::daemon {

constexpr const char* kNvmetRoot = "/sys/kernel/config/nvmet";
// One directory per connected controller (kernels with CONFIG_NVME_TARGET_DEBUGFS).
constexpr const char* kNvmetDebugfs = "/sys/kernel/debug/nvmet";

// What to serve and where.
struct NvmetExport {
  std::string nqn;
  std::string device_path;  // /dev/ublkbN
  std::string uuid;         // namespace UUID (8-4-4-4-12), NGUID (32 hex) and serial: stable per VD
  std::string nguid;
  std::string serial;
  std::string trtype = "tcp";
  std::string adrfam = "ipv4";  // ipv4 | ipv6
  std::string traddr, trsvcid;
  std::vector<std::string> hosts;  // allowed host NQNs
  bool allow_any_host = false;
  // DH-HMAC-CHAP: the secret (DHHC-1:...) the listed hosts authenticate
  // with, "" for none. nvmet keeps it per host entry (hosts/<nqn>/dhchap_key),
  // so it is set only on an entry the daemon made: another entry with
  // another key (or none) serves other subsystems too, and is refused.
  std::string dhchap_key;
};

// What the daemon created (and so may remove).
struct NvmetOwned {
  std::string port_id;  // the port the subsystem is linked to
  bool port_created = false;
  std::vector<std::string> hosts_created;  // entries under hosts/
};

// One configfs operation of a plan.
struct NvmetOp {
  enum Kind { Mkdir, Rmdir, Write, Symlink, Unlink } kind;
  std::string path;   // absolute
  std::string value;  // Write: the text; Symlink: the target
  bool secret = false;  // Write of a secret: error messages never show the value
  bool operator==(const NvmetOp&) const = default;
};

// A controller connected to a subsystem (as far as the kernel shows it).
struct NvmetHost {
  std::string host_nqn;  // empty when only the TCP peer is known
  std::string address;   // peer address
  std::string state;
};

// The namespace id gpuraid serves a VD under.
constexpr int kNvmetNsid = 1;

// The stable identity of a VD's namespace from its group's UUID and its id.
void nvmet_identity(const std::string& group_uuid, const std::string& vd, NvmetExport* x);

class Nvmet {
 public:
  // debugfs and proc_net: where connected() looks (a made-up tree in tests).
  explicit Nvmet(std::string root = kNvmetRoot, std::string debugfs = kNvmetDebugfs,
                 std::string proc_net = "/proc/net")
      : root_(std::move(root)), debugfs_(std::move(debugfs)), proc_net_(std::move(proc_net)) {}
  const std::string& root() const { return root_; }

  // Why nothing can be configured here ("" when it can): nvmet not loaded,
  // configfs not mounted; the text says which modprobe/mount to run.
  std::string unavailable() const;
  // The transport module of `trtype` missing (e.g. "modprobe nvmet-tcp"), or "".
  static std::string transport_missing(const std::string& trtype);

  bool subsystem_exists(const std::string& nqn) const;
  // The port with this address, or "".
  std::string find_port(const std::string& trtype, const std::string& traddr, const std::string& trsvcid) const;
  // Subsystems linked to port `id`.
  std::vector<std::string> port_subsystems(const std::string& id) const;
  // Subsystems that allow host `nqn`.
  std::vector<std::string> host_users(const std::string& nqn) const;

  // Operations that bring `x` into being, creating only what is not there
  // (after a restart most or all of it is); *owned gets what they create,
  // added to what it held. False and *err when what is there conflicts
  // (the subsystem serves another device, a new port's id is taken).
  bool plan_create(const NvmetExport& x, NvmetOwned* owned, std::vector<NvmetOp>* ops, std::string* err) const;
  // Operations that remove the subsystem `nqn` and what else `owned` says
  // the daemon created and nothing else uses.
  std::vector<NvmetOp> plan_remove(const std::string& nqn, const NvmetOwned& owned) const;
  // Runs a plan; on a failure undoes what it did (in reverse) and says which step failed.
  static bool apply(const std::vector<NvmetOp>& ops, std::string* err);

  // Whether the subsystem serves `device_path` as its namespace, enabled.
  bool serves(const std::string& nqn, const std::string& device_path) const;
  // Controllers connected to `nqn` over port (debugfs when the kernel has
  // it, else the TCP peers of the port).
  std::vector<NvmetHost> connected(const std::string& nqn, const NvmetExport& x) const;

 private:
  std::string root_, debugfs_, proc_net_;
};

// Tries to listen on traddr:trsvcid (TCP) as the kernel target would: ""
// when it could, else why not (in use by another application, address not
// on this host).
std::string nvmet_probe_listen(const std::string& adrfam, const std::string& traddr, const std::string& trsvcid);

}  // namespace gpuraid::daemon
