#include "daemon/options.h"

#include <CLI/CLI.hpp>

#include <cstdio>

#include "daemon/options_man.h"

#ifndef GPURAID_VERSION
#define GPURAID_VERSION "0.0.0"
#endif

namespace gpuraid::daemon {

int parse_options(int argc, char** argv, DaemonOptions* o) {
  CLI::App app{"gpuraidd: the gpuraid daemon (RAID over NVMe, gRPC control API). Runs in the foreground."};
  app.set_version_flag("--version", GPURAID_VERSION);
  app.set_config("--config", "", "read options from FILE (key = value, long option names; flags win)");
  app.allow_config_extras(CLI::config_extras_mode::error);
  app.add_option("--state-dir", o->state_dir, "directory holding the registry (created if missing)")->required();
  app.add_option("--socket", o->socket, "Unix socket of the API")->capture_default_str();
  app.add_option("--socket-group", o->socket_group, "group owning the socket (operators in it may connect)");
  app.add_option("--socket-mode", o->socket_mode, "permissions of the socket (octal)")->capture_default_str();
  app.add_option("--listen-tcp", o->listen_tcp, "also serve the API on HOST:PORT (TLS with client certificates)");
  app.add_option("--tls-cert", o->tls_cert, "server certificate (PEM) for --listen-tcp")->check(CLI::ExistingFile);
  app.add_option("--tls-key", o->tls_key, "server private key (PEM)")->check(CLI::ExistingFile);
  app.add_option("--tls-ca", o->tls_ca, "CA (PEM) that client certificates must chain to")->check(CLI::ExistingFile);
  app.add_flag("--insecure-tcp", o->insecure_tcp, "allow --listen-tcp without TLS, on a loopback address only");
  app.add_option("--metrics", o->metrics, "serve Prometheus metrics on PORT (127.0.0.1) or HOST:PORT");
  app.add_option("--log-file", o->log_file, "log to FILE (SIGHUP reopens it) instead of stderr");
  app.add_option("--log-level", o->log_level, "trace, debug, info, warn, error")->capture_default_str();
  app.add_option("--reactors", o->reactors, "I/O reactor threads")->capture_default_str()->check(CLI::Range(1, 64));
  app.add_option("--parity-backend,--parity", o->parity,
                 "parity backend: auto (CUDA when a usable GPU exists), cpu, cuda, reference, kernel-cpu (the CUDA "
                 "kernels on CPU threads standing in for a GPU: tests)")
      ->capture_default_str();
  add_accelerator_options(app, &o->gpu);
  app.add_option("--arena", o->arena, "I/O buffer arena per reactor")->capture_default_str();
  app.add_option("--write-gather-us", o->write_gather_us,
                 "longest a sequential parity write waits for the rest of its stripe, in microseconds (0: never)")
      ->capture_default_str()
      ->check(CLI::Range(0, 100000));
  app.add_option("--metadata-timeout-ms", o->metadata_timeout_ms,
                 "time limit of every metadata write or flush (superblocks, write-intent bitmap); a member that "
                 "does not answer within it is failed (missing, for a lost fabrics path) and its volumes go on")
      ->capture_default_str()
      ->check(CLI::Range(100u, 600000u));
  app.add_option("--scan", o->scan, "where members may be found if their recorded path changed (repeatable)");
  app.add_option("--nbd-dir", o->nbd_dir, "directory of NBD sockets by default (default: the state dir)");
  app.add_option("--nvmet-root", o->nvmet_root,
                 "the kernel NVMe-oF target's configfs directory, where NVMe-oF exports are made (default: "
                 "/sys/kernel/config/nvmet; tests give another to act as a host without nvmet)");
  app.add_option("--ublk-queues", o->ublk_queues, "queues per ublk device (default 0: one per reactor)")
      ->check(CLI::Range(0, 64));
  app.add_option("--ublk-depth", o->ublk_depth, "tags per ublk queue")->capture_default_str()->check(CLI::Range(1, 4096));
  app.add_option("--nbd-max-connections", o->nbd_max_connections,
                 "connections per NBD export (handshaking or serving); more are closed at once")
      ->capture_default_str()
      ->check(CLI::Range(1, 4096));
  app.add_option("--nbd-handshake-timeout", o->nbd_handshake_timeout_s,
                 "seconds an NBD client has for its whole handshake (TLS included) before it is dropped")
      ->capture_default_str()
      ->check(CLI::Range(0.1, 3600.0));
  app.add_option("--nbd-max-inflight", o->nbd_max_inflight,
                 "data bytes in flight per NBD connection, 1M to half of --arena (default 16M, or a quarter of "
                 "--arena if less); more requests wait unread");
  app.add_flag("--nvme-passthru", o->nvme_passthru,
               "allow nvme-char drives (/dev/ngXnY): member I/O as NVMe commands through io_uring passthrough");
  app.add_option("--event-log-max", o->event_log_max,
                 "rotate STATE_DIR/events.jsonl past this size (one older file is kept)")
      ->capture_default_str();
  app.add_option("--event-hook", o->event_hook,
                 "run CMD (/bin/sh -c) for every event: the event as JSON on stdin, GPURAID_EVENT_* in the environment");
  app.add_option("--event-hook-timeout", o->event_hook_timeout_s, "seconds before a hook still running is killed")
      ->capture_default_str()
      ->check(CLI::Range(0.1, 3600.0));
  app.add_option("--event-hook-queue", o->event_hook_queue, "events that may wait for the hook; more are not passed on")
      ->capture_default_str()
      ->check(CLI::Range(1, 1 << 20));
  app.add_option("--ublk-on-exit", o->ublk_on_exit,
                 "at a clean stop, delete ublk devices, or keep them (with their queued I/O) for the next daemon")
      ->capture_default_str()
      ->check(CLI::IsMember({"delete", "keep"}));
  // Hidden: the build writes gpuraidd(8) with it (packaging/CMakeLists.txt).
  app.add_flag_callback("--manpage", [&app] {
       printf("%s", man::render(app, daemon_man_page()).c_str());
       throw CLI::Success();
     }, "print gpuraidd(8) (roff)")
      ->group("");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }
  return -1;
}

}  // namespace gpuraid::daemon
