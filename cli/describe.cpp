#include "cli/describe.h"

#include <algorithm>

#include "cli/output.h"

namespace gpuraid::cli {

namespace v1 = gpuraid::v1;

std::string level_str(const v1::Group& g) {
  if (g.level() == v1::RAID_LEVEL_EC) return "ec " + std::to_string(g.members_size() - int(g.parity())) + "+" + std::to_string(g.parity());
  return v1::api_word(g.level());
}

std::string room_str(const v1::Group& g) {
  if (!g.declustered_spares()) return "";
  const uint32_t used = std::min(g.distributed_spares_used(), g.declustered_spares());
  std::string s = std::to_string(used) + " of " + std::to_string(g.declustered_spares()) + " used, " +
                  std::to_string(g.declustered_spares() - used) + " free";
  // Its drive: the member's in the list (rebuilding, with the rebuild's progress bar).
  if (g.has_distributed_spare_copy_back())
    s += "; member " + std::to_string(g.distributed_spare_copy_back()) + " is being copied back onto its drive";
  return s;
}

std::string export_str(const v1::Volume& v) {
  if (!v.has_export_()) return "-";
  const auto& e = v.export_();
  std::string s = v1::api_word(e.kind()) + " ";
  if (e.kind() == v1::EXPORT_KIND_NVMF) {
    const auto& n = e.nvmf();
    const bool v6 = n.traddr().find(':') != std::string::npos;
    s += n.nqn() + " at " + n.transport() + "://" + (v6 ? "[" + n.traddr() + "]" : n.traddr()) + ":" + n.trsvcid() +
         " over " + e.dev_path();
  } else {
    s += !e.dev_path().empty() ? e.dev_path() : !e.uri().empty() ? e.uri() : e.listen();
  }
  if (!e.active()) s += " (inactive: " + e.note() + ")";
  return s;
}

std::string export_security_str(const v1::Volume& v) {
  if (v.has_export_() && v.export_().kind() == v1::EXPORT_KIND_NVMF) {
    const auto& n = v.export_().nvmf();
    if (n.allow_any_host()) return "none: ANY host may connect";
    return n.dhchap() ? "allowed host NQNs, authenticated with DH-HMAC-CHAP" : "allowed host NQNs (no authentication)";
  }
  if (!v.has_export_() || v.export_().kind() != v1::EXPORT_KIND_NBD) return "-";
  const auto& s = v.export_().nbd_security();
  std::string how = !s.tls_psk().empty() ? "PSK " + s.tls_psk() : "X.509, client certificates from " + s.tls_ca();
  std::string d = s.tls() == v1::NBD_TLS_REQUIRE ? "TLS required (" + how + ")"
                  : s.tls() == v1::NBD_TLS_ALLOW ? "TLS allowed, plain clients too (" + how + ")"
                                                 : "no TLS";
  if (s.insecure_listen()) d += "; INSECURE listen: plain NBD on a non-loopback address (--insecure-listen)";
  return d;
}

std::string group_state_word(v1::GroupState s) { return v1::api_word(s); }
std::string drive_state_word(v1::DriveState s) { return v1::api_word(s); }

std::string parity_paths_str(const v1::ParityPaths& p) {
  const bool accelerator = p.zero_copy_batches() || p.staged_batches() || p.cpu_batches() || p.device_jobs() ||
                           p.fallback_jobs() || p.reactors_on_cpu();
  if (!accelerator) return "";
  std::string s;
  if (p.reactors_on_cpu()) s = std::to_string(p.reactors_on_cpu()) + " reactor(s) on the CPU (" + p.on_cpu_reason() + "); ";
  s += std::to_string(p.zero_copy_batches()) + " zero-copy / " + std::to_string(p.staged_batches()) +
       " staged batches; jobs: " + std::to_string(p.device_jobs()) + " on the device, " +
       std::to_string(p.routed_jobs() + p.capped_jobs()) + " routed to the CPU, " +
       std::to_string(p.fallback_jobs()) + " fallen back";
  if (p.device_errors() || p.device_timeouts())
    s += "; device errors " + std::to_string(p.device_errors()) + ", timeouts " + std::to_string(p.device_timeouts());
  return s;
}

}  // namespace gpuraid::cli
