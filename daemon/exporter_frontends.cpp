// Built when daemon/frontends provides ExportManager: forwards to it.
#include "daemon/exporter.h"
#include "daemon/frontends/export_manager.h"

#include <spdlog/spdlog.h>

#include "daemon/frontends/frontend_log.h"

namespace gpuraid::daemon {

namespace {
class FrontendExporter final : public Exporter {
 public:
  FrontendExporter(Engine& e, const ExportSettings& s) : m_(e), keep_ublk_(s.keep_ublk_on_exit) {
    UblkConfig c;
    c.queues = s.ublk_queues;
    c.depth = s.ublk_depth;
    m_.set_ublk_config(c);
    m_.set_nbd_limits({s.nbd_max_connections, s.nbd_handshake_timeout_ms, s.nbd_max_inflight_bytes});
  }
  bool export_nbd(const std::string& vd, BlockTarget* t, const std::string& listen, const NbdTlsConfig& tls,
                  std::string* uri, std::string* err) override {
    return m_.export_nbd(vd, t, listen, tls, uri, err);
  }
  bool export_ublk(const std::string& vd, BlockTarget* t, int want, std::string* dev_path, int* dev_id,
                   std::string* err) override {
    return m_.export_ublk(vd, t, want, dev_path, dev_id, err);
  }
  bool unexport(const std::string& vd, std::string* err) override { return m_.unexport(vd, err); }
  void stop_all() override { m_.stop_all(keep_ublk_); }

 private:
  ExportManager m_;
  bool keep_ublk_;
};
}  // namespace

std::unique_ptr<Exporter> make_exporter(Engine& e, const ExportSettings& s) {
  // The frontends' diagnostics (refused clients, failed TLS handshakes)
  // belong in the daemon's log, not on a stderr that --log-file leaves unread.
  set_frontend_log_sink([](const char* line) { spdlog::warn("{}", line); });
  return std::make_unique<FrontendExporter>(e, s);
}

}  // namespace gpuraid::daemon
