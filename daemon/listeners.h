// Where the API listens. The Unix socket: its directory made, a stale
// socket removed (a live one means another daemon: refused), created with
// no more than the requested mode, then given its group. TCP: only with
// TLS and client certificates (mutual TLS), or plain on loopback with
// --insecure-tcp; anything else is refused before the daemon starts.
#pragma once
#include <grpcpp/security/server_credentials.h>
#include <sys/types.h>

#include <memory>
#include <string>

#include "daemon/options.h"

namespace gpuraid::daemon {

struct ListenPlan {
  std::string unix_path;
  mode_t mode = 0660;
  gid_t gid = gid_t(-1);
  std::string tcp;  // HOST:PORT, empty = none
  std::shared_ptr<grpc::ServerCredentials> tcp_creds;
  std::string tcp_desc;
};

bool plan_listeners(const DaemonOptions& o, ListenPlan* p, std::string* err);
bool prepare_unix_socket(const ListenPlan& p, std::string* err);
bool finish_unix_socket(const ListenPlan& p, std::string* err);
// Splits HOST:PORT ([v6]:PORT too).
bool split_host_port(const std::string& s, std::string* host, int* port);
bool is_loopback(const std::string& host);

}  // namespace gpuraid::daemon
