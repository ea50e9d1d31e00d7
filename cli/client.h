// The CLI's connection to gpuraidd: where (--socket, GPURAID_SOCKET, the
// default /run/gpuraid/gpuraid.sock, or --connect HOST:PORT with TLS
// client certificates), unary calls with a deadline, and the mapping from
// gRPC statuses to exit codes and messages a person can act on.
#pragma once
#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>

#include "gpuraid/v1/fabrics.grpc.pb.h"
#include "gpuraid/v1/gpuraid.grpc.pb.h"
#include "cli/exit_codes.h"

namespace gpuraid::cli {

namespace v1 = gpuraid::v1;

struct Globals {
  std::string socket;
  std::string connect;  // HOST:PORT (TLS)
  std::string tls_ca, tls_cert, tls_key, tls_server_name;
  bool json = false;
  double timeout_s = 60;
};

class Client {
 public:
  explicit Client(const Globals& g);
  v1::Gpuraid::Stub& stub() { return *stub_; }
  v1::Fabrics::Stub& fabrics() { return *fabrics_; }
  std::unique_ptr<grpc::ClientContext> context(bool no_deadline = false) const;
  // Prints what went wrong and returns the exit code for it.
  int fail(const grpc::Status& s) const;
  const std::string& target() const { return target_; }
  // The API's strings are UTF-8 (gRPC would not send others, and say
  // nothing useful): a usage error naming the argument, else kOk.
  static int check_utf8(const google::protobuf::Message& q);

  template <typename Req, typename Resp, typename M>
  int call(M method, const Req& q, Resp* r) {
    return call_on(*stub_, method, q, r);
  }
  template <typename Stub, typename Req, typename Resp, typename M>
  int call_on(Stub& stub, M method, const Req& q, Resp* r) {
    if (int rc = check_utf8(q)) return rc;
    auto ctx = context();
    grpc::Status s = (stub.*method)(ctx.get(), q, r);
    return s.ok() ? kOk : fail(s);
  }

 private:
  std::string target_;
  bool unix_ = true;
  double timeout_s_;
  std::unique_ptr<v1::Gpuraid::Stub> stub_;
  std::unique_ptr<v1::Fabrics::Stub> fabrics_;
};

}  // namespace gpuraid::cli
