// Built when daemon/frontends is absent: no exports (the API answers
// UNIMPLEMENTED).
#include "daemon/exporter.h"

namespace gpuraid::daemon {
std::unique_ptr<Exporter> make_exporter(Engine&, const ExportSettings&) { return nullptr; }
}  // namespace gpuraid::daemon
