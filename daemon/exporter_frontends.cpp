// Built when daemon/frontends provides ExportManager: forwards to it.
#include "daemon/exporter.h"
#include "daemon/frontends/export_manager.h"

namespace gpuraid::daemon {

namespace {
class FrontendExporter final : public Exporter {
 public:
  explicit FrontendExporter(Engine& e) : m_(e) {}
  bool export_nbd(const std::string& vd, BlockTarget* t, const std::string& listen, std::string* uri,
                  std::string* err) override {
    return m_.export_nbd(vd, t, listen, uri, err);
  }
  bool export_ublk(const std::string& vd, BlockTarget* t, int want, std::string* dev_path, int* dev_id,
                   std::string* err) override {
    return m_.export_ublk(vd, t, want, dev_path, dev_id, err);
  }
  bool unexport(const std::string& vd, std::string* err) override { return m_.unexport(vd, err); }
  void stop_all() override { m_.stop_all(); }

 private:
  ExportManager m_;
};
}  // namespace

std::unique_ptr<Exporter> make_exporter(Engine& e) { return std::make_unique<FrontendExporter>(e); }

}  // namespace gpuraid::daemon
