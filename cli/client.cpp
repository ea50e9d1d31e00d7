#include "cli/client.h"

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "cli/errors.h"
#include "engine/utf8.h"

namespace gpuraid::cli {

namespace {
constexpr int kMaxMessage = 16 << 20;

std::string slurp(const std::string& path) {
  std::ifstream f(path);
  if (!f) {
    exit(file_error("cannot read " + path));
  }
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}
}  // namespace

Client::Client(const Globals& g) : timeout_s_(g.timeout_s) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(kMaxMessage);
  args.SetMaxSendMessageSize(kMaxMessage);
  std::shared_ptr<grpc::ChannelCredentials> creds;
  if (!g.connect.empty()) {
    unix_ = false;
    target_ = g.connect;
    grpc::SslCredentialsOptions o;
    if (!g.tls_ca.empty()) o.pem_root_certs = slurp(g.tls_ca);
    if (!g.tls_cert.empty()) o.pem_cert_chain = slurp(g.tls_cert);
    if (!g.tls_key.empty()) o.pem_private_key = slurp(g.tls_key);
    if (!g.tls_server_name.empty()) args.SetSslTargetNameOverride(g.tls_server_name);
    creds = grpc::SslCredentials(o);
  } else {
    target_ = g.socket;
    if (target_.empty()) {
      const char* env = getenv("GPURAID_SOCKET");
      target_ = env && *env ? env : "/run/gpuraid/gpuraid.sock";
    }
    creds = grpc::InsecureChannelCredentials();
  }
  auto ch = grpc::CreateCustomChannel(unix_ ? "unix:" + target_ : target_, creds, args);
  stub_ = v1::Gpuraid::NewStub(ch);
  fabrics_ = v1::Fabrics::NewStub(ch);
}

std::unique_ptr<grpc::ClientContext> Client::context(bool no_deadline) const {
  auto ctx = std::make_unique<grpc::ClientContext>();
  if (!no_deadline)
    ctx->set_deadline(std::chrono::system_clock::now() +
                      std::chrono::milliseconds(int64_t(timeout_s_ * 1000)));
  return ctx;
}

int Client::check_utf8(const google::protobuf::Message& q) {
  namespace pb = google::protobuf;
  const pb::Descriptor* d = q.GetDescriptor();
  const pb::Reflection* r = q.GetReflection();
  for (int i = 0; i < d->field_count(); i++) {
    const pb::FieldDescriptor* f = d->field(i);
    const int n = f->is_repeated() ? r->FieldSize(q, f) : 1;
    for (int k = 0; k < n; k++) {
      if (f->type() == pb::FieldDescriptor::TYPE_STRING) {
        const std::string s = f->is_repeated() ? r->GetRepeatedString(q, f, k) : r->GetString(q, f);
        if (!utf8_valid(s)) return usage_error(utf8_quote(s, 64) + " (" + f->name() + ") is not valid UTF-8");
      } else if (f->type() == pb::FieldDescriptor::TYPE_MESSAGE && (f->is_repeated() || r->HasField(q, f))) {
        if (int rc = check_utf8(f->is_repeated() ? r->GetRepeatedMessage(q, f, k) : r->GetMessage(q, f))) return rc;
      }
    }
  }
  return kOk;
}

int Client::fail(const grpc::Status& s) const {
  using C = grpc::StatusCode;
  if (s.error_code() == C::UNAVAILABLE) {
    struct stat st;
    std::string hint;
    if (unix_ && stat(target_.c_str(), &st) != 0)
      hint = ": no socket there (is gpuraidd running? use --socket PATH or GPURAID_SOCKET)";
    else if (unix_ && access(target_.c_str(), R_OK | W_OK) != 0)
      hint = ": permission denied (join the socket's group, or run as root)";
    else
      hint = ": " + s.error_message();
    return report_error(kConnectError, "unreachable", "cannot reach gpuraidd at " + target_ + hint, false);
  }
  const char* what = "error";
  switch (s.error_code()) {
    case C::INVALID_ARGUMENT: what = "invalid_request"; break;
    case C::NOT_FOUND: what = "not_found"; break;
    case C::ALREADY_EXISTS: what = "already_exists"; break;
    case C::FAILED_PRECONDITION: what = "refused"; break;
    case C::OUT_OF_RANGE: what = "out_of_range"; break;
    case C::UNIMPLEMENTED: what = "not_available"; break;
    case C::DATA_LOSS: what = "data_loss"; break;
    case C::DEADLINE_EXCEEDED: what = "timed_out"; break;
    case C::PERMISSION_DENIED:
    case C::UNAUTHENTICATED: what = "not_allowed"; break;
    default: break;
  }
  return report_error(kServerError, what, s.error_message());
}

}  // namespace gpuraid::cli
