#include "daemon/frontends/export_manager.h"
#include "daemon/frontends/frontend_log.h"

#include <sys/stat.h>

#include <cstdlib>

#include "engine/utf8.h"

namespace gpuraid {

namespace {
// The API's own rule (engine/utf8.h): a VD named there is exportable.
bool valid_name(const std::string& vd) {
  std::string why;
  return name_rule_ok(vd, 64, &why);
}
}  // namespace

ExportManager::ExportManager(Engine& engine) : engine_(engine) {}
ExportManager::~ExportManager() { stop_all(); }

std::string ExportManager::default_socket_path(const std::string& vd) {
  const char* d = getenv("GPURAID_RUN_DIR");
  std::string dir = d && *d ? d : "/run/gpuraid";
  mkdir(dir.c_str(), 0755);
  return dir + "/nbd-" + vd + ".sock";
}

bool ExportManager::export_nbd(const std::string& vd, BlockTarget* target, const std::string& listen,
                               const NbdTlsConfig& tls, std::string* uri, std::string* err) {
  if (!valid_name(vd)) return *err = "bad virtual drive name '" + vd + "'", false;
  if (!target) return *err = "no block target for '" + vd + "'", false;
  std::lock_guard<std::mutex> g(mu_);
  Export& e = exports_[vd];
  if (e.nbd) return *err = vd + " is already exported over NBD", false;
  auto s = NbdServer::start(engine_, target, vd, listen.empty() ? "unix:" + default_socket_path(vd) : listen, tls,
                            nbd_limits_, uri, err);
  if (!s) {
    if (!e.ublk) exports_.erase(vd);
    return false;
  }
  e.nbd = std::move(s);
  return true;
}

bool ExportManager::ensure_ublk_control(std::string* err) {
  if (!ublk_ctl_) ublk_ctl_ = UblkControl::open(err);
  return ublk_ctl_ != nullptr;
}

bool ExportManager::export_ublk(const std::string& vd, BlockTarget* target, int want_dev_id, std::string* dev_path,
                                int* dev_id, std::string* err) {
  if (!valid_name(vd)) return *err = "bad virtual drive name '" + vd + "'", false;
  if (!target) return *err = "no block target for '" + vd + "'", false;
  if (target->size_bytes() < 4096) return *err = vd + " is too small to export", false;
  std::lock_guard<std::mutex> g(mu_);
  if (!ensure_ublk_control(err)) return false;
  Export& e = exports_[vd];
  if (e.ublk) return *err = vd + " is already exported as " + e.ublk->block_path(), false;
  auto d = UblkDevice::create(*ublk_ctl_, engine_, target, want_dev_id, ublk_cfg_, err);
  if (!d) {
    if (!e.nbd) exports_.erase(vd);
    return false;
  }
  *dev_path = d->block_path();
  *dev_id = int(d->id());
  e.ublk = std::move(d);
  return true;
}

bool ExportManager::unexport(const std::string& vd, std::string* err) {
  std::lock_guard<std::mutex> g(mu_);
  auto it = exports_.find(vd);
  if (it == exports_.end()) return *err = vd + " is not exported", false;
  bool ok = true;
  // NBD clients: in-flight requests answered, then a clean close. ublk:
  // STOP_DEV deletes the disk once the I/O in flight completes (the kernel
  // drains the queue before the disk goes).
  if (it->second.nbd) it->second.nbd->drain(10000);
  it->second.nbd.reset();
  if (it->second.ublk) ok = it->second.ublk->remove(err);
  exports_.erase(it);
  return ok;
}

void ExportManager::stop_all(bool keep_ublk) {
  std::lock_guard<std::mutex> g(mu_);
  for (auto& [vd, e] : exports_) {
    e.nbd.reset();
    std::string err;
    if (!e.ublk) continue;
    if (keep_ublk) {
      int held = e.ublk->detach_for_restart(30000);
      if (held >= 0) {
        frontend_log("ublk %s: %s kept for the next daemon (%d request(s) held for it)\n", vd.c_str(),
                e.ublk->block_path().c_str(), held);
        // Deliberately never destroyed: the reactors may still deliver
        // requests to its queues (to be held) until the process exits, and
        // the driver needs the mappings until then.
        (void)e.ublk.release();
        continue;
      }
      frontend_log("ublk %s: requests did not finish: deleting the device instead\n", vd.c_str());
    }
    if (!e.ublk->remove(&err)) frontend_log("unexport %s: %s\n", vd.c_str(), err.c_str());
  }
  exports_.clear();
}

}  // namespace gpuraid
