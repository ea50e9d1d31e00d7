// gpuraidd's options: command-line flags, optionally read from a config
// file (--config FILE, "key = value" lines with the long flag names;
// flags given on the command line win).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "engine/parity/accelerator_options.h"

namespace gpuraid::daemon {

struct DaemonOptions {
  std::string state_dir;
  std::string socket = "/run/gpuraid/gpuraid.sock";
  std::string socket_group;
  std::string socket_mode = "0660";
  std::string listen_tcp;  // HOST:PORT
  std::string tls_cert, tls_key, tls_ca;
  bool insecure_tcp = false;
  std::string metrics;  // PORT (loopback) or HOST:PORT
  std::string log_file, log_level = "info";
  uint32_t reactors = 2;
  std::string parity = "auto";
  AcceleratorWords gpu;  // --gpu-*
  std::string arena = "64M";
  uint32_t write_gather_us = 1000;  // EngineConfig::write_gather_us
  uint32_t metadata_timeout_ms = 10000;  // Drive::set_metadata_timeout_ms
  std::vector<std::string> scan;
  std::string nbd_dir;
  std::string nvmet_root;  // "": the kernel's (/sys/kernel/config/nvmet)
  uint32_t ublk_queues = 0;   // 0: one per reactor
  uint32_t ublk_depth = 128;
  std::string ublk_on_exit = "delete";
  uint32_t nbd_max_connections = 64;    // per NBD export
  double nbd_handshake_timeout_s = 10;  // the whole NBD handshake, TLS included
  std::string nbd_max_inflight;  // buffer bytes per NBD connection ("": 16M, or a quarter of the arena if less)
  std::string event_log_max = "4M";  // events.jsonl is rotated past this size
  std::string event_hook;            // command run for every event (/bin/sh -c)
  double event_hook_timeout_s = 30;
  uint32_t event_hook_queue = 256;
  bool nvme_passthru = false;  // SQE128|CQE32 rings: nvme-char drives (/dev/ngXnY) can be added  // or "keep": devices wait for the next daemon  // default NBD socket directory (default: the state dir)
};

// Returns -1 to go on, or the exit code (0 for --help/--version, 2 for a usage error).
int parse_options(int argc, char** argv, DaemonOptions* o);

}  // namespace gpuraid::daemon
