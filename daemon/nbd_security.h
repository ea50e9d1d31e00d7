// The NBD export policy (issue 19): TLS settings checked, and the listen
// rule: plain NBD on a TCP address that is not loopback is refused unless
// the operator asked for it (insecure_listen), which is then logged, kept
// in the registry, and shown (vd show, metrics). Unix sockets are not
// affected (their directory's permissions and group guard them).
#pragma once
#include <grpcpp/support/status.h>

#include <string>

#include "daemon/nbd_tls_config.h"
#include "gpuraid/v1/gpuraid.pb.h"

namespace gpuraid::daemon {

// listen: an already valid unix:PATH or tcp:HOST:PORT.
grpc::Status check_nbd_security(const std::string& vd, const std::string& listen, const v1::NbdSecurity& s);
NbdTlsConfig tls_config(const v1::NbdSecurity& s);

}  // namespace gpuraid::daemon
