// gpuraidd: the gpuraid daemon. Runs in the foreground (systemd style):
//   gpuraidd --state-dir DIR [--socket PATH] [--config FILE] ...
// Exit codes: 0 clean shutdown (SIGTERM/SIGINT), 1 failure at start,
// 2 bad options or configuration.
#include <grpcpp/grpcpp.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>

#include "daemon/api_service.h"
#include "daemon/control_plane.h"
#include "daemon/engine_host.h"
#include "daemon/event_bus.h"
#include "daemon/event_hook.h"
#include "daemon/exporter.h"
#include "daemon/fabrics_service.h"
#include "daemon/listeners.h"
#include "daemon/logging.h"
#include "daemon/metrics_http.h"
#include "daemon/options.h"
#include "daemon/registry_store.h"
#include "engine/units.h"

using namespace gpuraid;
using namespace gpuraid::daemon;

namespace {

constexpr int kMaxMessage = 16 << 20;  // 4 MiB debug I/O plus framing

int fail(int code, const std::string& msg) {
  spdlog::critical("{}", msg);
  return code;
}

bool make_engine_config(const DaemonOptions& o, EngineConfig* cfg, std::string* err) {
  ParityBackendKind kind;
  if (!parse_parity_backend(o.parity, &kind)) {
    *err = "--parity must be auto, cpu, cuda, reference or kernel-cpu (got '" + o.parity + "')";
    return false;
  }
  AcceleratorSettings gpu;
  if (!o.gpu.settings(&gpu, err)) return false;
  uint64_t arena;
  if (!parse_size(o.arena, &arena) || arena < (4u << 20) || arena > (16ull << 30)) {
    *err = "--arena must be a size from 4M to 16G (got '" + o.arena + "')";
    return false;
  }
  // Fail now, with the reason, if the backend cannot be made.
  if (!make_parity_backend(kind, gpu, err)) return false;
  cfg->reactors = o.reactors;
  cfg->arena_bytes = arena;
  cfg->nvme_passthru = o.nvme_passthru;
  cfg->write_gather_us = o.write_gather_us;
  Drive::set_metadata_timeout_ms(o.metadata_timeout_ms);
  cfg->parity_factory = [kind, gpu] {
    std::string e;
    return make_parity_backend(kind, gpu, &e);
  };
  return true;
}

// Waits for SIGTERM/SIGINT (returns) and handles SIGHUP (reopens logs).
void wait_for_stop(const sigset_t& set) {
  for (;;) {
    int sig = 0;
    if (sigwait(&set, &sig) != 0) continue;
    if (sig == SIGHUP) {
      reopen_logs();
      continue;
    }
    spdlog::info("{} received: shutting down", sig == SIGTERM ? "SIGTERM" : "SIGINT");
    return;
  }
}

}  // namespace

int main(int argc, char** argv) {
  DaemonOptions o;
  if (int rc = parse_options(argc, argv, &o); rc >= 0) return rc;
  std::string err;
  if (!setup_logging(o.log_file, o.log_level, &err)) {
    fprintf(stderr, "gpuraidd: %s\n", err.c_str());
    return 2;
  }
  // Signals go to the main thread's sigwait: block them before any thread starts.
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  signal(SIGPIPE, SIG_IGN);

  ListenPlan plan;
  EngineConfig ecfg;
  if (!plan_listeners(o, &plan, &err) || !make_engine_config(o, &ecfg, &err)) return fail(2, err);
  // Taken, as asked, but never silently: whoever can connect controls every drive.
  if (plan.mode & 0006)
    spdlog::warn("--socket-mode {:04o}: every local user can connect to {} and so create, fail and delete groups "
                 "and read every volume; 0660 with --socket-group limits that to one group",
                 unsigned(plan.mode), plan.unix_path);
  uint64_t event_log_max = 0;
  if (!parse_size(o.event_log_max, &event_log_max) || event_log_max < (16u << 10) || event_log_max > (1ull << 30))
    return fail(2, "--event-log-max must be a size from 16K to 1G (got '" + o.event_log_max + "')");
  uint64_t nbd_max_inflight = std::min<uint64_t>(16u << 20, ecfg.arena_bytes / 4);
  if (!o.nbd_max_inflight.empty() &&
      (!parse_size(o.nbd_max_inflight, &nbd_max_inflight) || nbd_max_inflight < (1u << 20) ||
       nbd_max_inflight > ecfg.arena_bytes / 2))
    return fail(2, "--nbd-max-inflight must be a size from 1M to half of --arena (got '" + o.nbd_max_inflight + "')");
  RegistryStore store(o.state_dir);
  if (!store.open(&err)) return fail(1, err);
  EventBus bus;
  if (!bus.open_log(o.state_dir, event_log_max, &err)) return fail(1, "cannot open the event log: " + err);
  std::unique_ptr<EventHook> hook;
  if (!o.event_hook.empty()) {
    hook = std::make_unique<EventHook>(o.event_hook, o.event_hook_queue,
                                       std::chrono::milliseconds(int64_t(o.event_hook_timeout_s * 1000)));
    bus.set_hook(hook.get());
    spdlog::info("event hook: {} (timeout {} s, {} events may wait)", o.event_hook, o.event_hook_timeout_s,
                 o.event_hook_queue);
  }
  if (!prepare_unix_socket(plan, &err)) return fail(1, err);

  auto host = EngineHost::start(ecfg, &err);
  if (!host) return fail(1, "cannot start the engine: " + err);
  ExportSettings xs;
  xs.ublk_queues = o.ublk_queues;
  xs.ublk_depth = o.ublk_depth;
  xs.keep_ublk_on_exit = o.ublk_on_exit == "keep";
  xs.nbd_max_connections = o.nbd_max_connections;
  xs.nbd_handshake_timeout_ms = uint32_t(o.nbd_handshake_timeout_s * 1000);
  xs.nbd_max_inflight_bytes = nbd_max_inflight;
  auto exporter = make_exporter(host->engine(), xs);
  ControlOptions copt;
  copt.scan = o.scan;
  copt.nbd_default_dir = o.nbd_dir.empty() ? o.state_dir : o.nbd_dir;
  copt.keep_exports_on_exit = xs.keep_ublk_on_exit;
  if (!o.nvmet_root.empty()) copt.nvmet_root = o.nvmet_root;
  copt.listeners.push_back("unix:" + plan.unix_path);
  if (!plan.tcp.empty()) copt.listeners.push_back(plan.tcp_desc);
  ControlPlane cp(*host, exporter.get(), bus, store, copt);
  if (!cp.start(&err)) return fail(1, err);

  ApiService service(cp, bus);
  FabricsService fabrics(cp);
  grpc::ServerBuilder b;
  b.SetMaxReceiveMessageSize(kMaxMessage);
  b.SetMaxSendMessageSize(kMaxMessage);
  // gRPC binds TCP with SO_REUSEPORT by default: a second daemon on the same
  // --listen-tcp port would start and share the clients. Refuse it instead.
  b.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  b.AddListeningPort("unix:" + plan.unix_path, grpc::InsecureServerCredentials());
  int tcp_port = 0;
  if (!plan.tcp.empty()) b.AddListeningPort(plan.tcp, plan.tcp_creds, &tcp_port);
  b.RegisterService(&service);
  b.RegisterService(&fabrics);
  mode_t old = umask(0777 & ~plan.mode);  // the socket is born with no more than its mode
  std::unique_ptr<grpc::Server> server = b.BuildAndStart();
  umask(old);
  if (!server || (!plan.tcp.empty() && tcp_port == 0)) {
    cp.shutdown();
    return fail(1, "cannot listen on " + plan.unix_path + (plan.tcp.empty() ? "" : " / " + plan.tcp));
  }
  if (!finish_unix_socket(plan, &err)) spdlog::warn("{}", err);

  MetricsServer metrics;
  auto metrics_text = [&cp, &bus, &hook] {
    return cp.metrics_text() + bus.metrics_text() + EventHook::metrics_text(hook.get());
  };
  if (!o.metrics.empty() && !metrics.start(o.metrics, metrics_text, &err)) {
    server->Shutdown();
    cp.shutdown();
    return fail(2, err);
  }
  std::string where = "unix:" + plan.unix_path + (plan.tcp.empty() ? "" : ", " + plan.tcp_desc) +
                      (metrics.where().empty() ? "" : ", metrics " + metrics.where());
  bus.publish(make_event(gpuraid::v1::EVENT_KIND_DAEMON_STARTED, "gpuraidd " GPURAID_VERSION " on " + where));
  spdlog::info("gpuraidd ready: parity backend {}, {} reactors, listening on {}",
               host->engine().reactor(0).parity().name(), host->reactors(), where);

  wait_for_stop(set);
  bus.close();
  server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
  metrics.stop();
  cp.shutdown();  // exports stop, groups stop cleanly, registry saved
  host->stop();
  bus.set_hook(nullptr);
  hook.reset();  // the hook running now finishes (or times out)
  unlink(plan.unix_path.c_str());
  spdlog::info("gpuraidd stopped cleanly");
  return 0;
}
