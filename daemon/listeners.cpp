#include "daemon/listeners.h"

#include <arpa/inet.h>
#include <grp.h>
#include <netdb.h>
#include <netinet/in.h>
#include <grpcpp/security/server_credentials.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace gpuraid::daemon {

namespace {
bool read_file(const std::string& path, std::string* out, std::string* err) {
  std::ifstream f(path);
  if (!f) {
    *err = "cannot read " + path;
    return false;
  }
  std::stringstream ss;
  ss << f.rdbuf();
  *out = ss.str();
  return true;
}

bool mkdirs(const std::string& dir) {
  if (dir.empty()) return true;
  struct stat st;
  if (stat(dir.c_str(), &st) == 0) return S_ISDIR(st.st_mode);
  size_t s = dir.rfind('/');
  if (s != std::string::npos && s > 0 && !mkdirs(dir.substr(0, s))) return false;
  return mkdir(dir.c_str(), 0755) == 0 || errno == EEXIST;
}
}  // namespace

bool split_host_port(const std::string& s, std::string* host, int* port) {
  size_t c = s.rfind(':');
  if (c == std::string::npos || c == 0 || c + 1 >= s.size()) return false;
  *host = s.substr(0, c);
  if (host->size() > 2 && host->front() == '[' && host->back() == ']') *host = host->substr(1, host->size() - 2);
  std::string p = s.substr(c + 1);
  if (p.size() > 5 || p.find_first_not_of("0123456789") != std::string::npos) return false;
  *port = std::stoi(p);
  return *port > 0 && *port < 65536;
}

bool is_loopback(const std::string& h) {
  // On what the name resolves to, as the servers bind it: "127.x.example"
  // or a "localhost" that resolves elsewhere is not loopback. A name that
  // does not resolve is not either (the caller refuses plain traffic).
  std::string host = h;
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  if (host.empty()) return false;
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  if (getaddrinfo(host.c_str(), nullptr, &hints, &res) != 0 || !res) return false;
  bool all = true;
  for (const addrinfo* a = res; a && all; a = a->ai_next) {
    if (a->ai_family == AF_INET) {
      const auto* in = reinterpret_cast<const sockaddr_in*>(a->ai_addr);
      all = (ntohl(in->sin_addr.s_addr) >> 24) == 127;
    } else if (a->ai_family == AF_INET6) {
      const in6_addr& in6 = reinterpret_cast<const sockaddr_in6*>(a->ai_addr)->sin6_addr;
      all = IN6_IS_ADDR_LOOPBACK(&in6) || (IN6_IS_ADDR_V4MAPPED(&in6) && in6.s6_addr[12] == 127);
    } else {
      all = false;
    }
  }
  freeaddrinfo(res);
  return all;
}

bool plan_listeners(const DaemonOptions& o, ListenPlan* p, std::string* err) {
  if (o.socket.empty() || o.socket[0] != '/') {
    *err = "--socket must be an absolute path";
    return false;
  }
  if (o.socket.size() >= sizeof(sockaddr_un::sun_path)) {
    *err = "--socket path is too long for a Unix socket (at most 107 bytes)";
    return false;
  }
  p->unix_path = o.socket;
  char* end = nullptr;
  unsigned long m = strtoul(o.socket_mode.c_str(), &end, 8);
  if (o.socket_mode.empty() || *end || m > 0777) {
    *err = "--socket-mode must be octal permissions such as 0660";
    return false;
  }
  p->mode = mode_t(m);
  if (!o.socket_group.empty()) {
    group* g = getgrnam(o.socket_group.c_str());
    if (!g) {
      *err = "no group named '" + o.socket_group + "' (--socket-group)";
      return false;
    }
    p->gid = g->gr_gid;
  }
  bool any_tls = !o.tls_cert.empty() || !o.tls_key.empty() || !o.tls_ca.empty();
  if (o.listen_tcp.empty()) {
    if (any_tls || o.insecure_tcp) {
      *err = "--tls-*/--insecure-tcp only apply with --listen-tcp";
      return false;
    }
    return true;
  }
  std::string host;
  int port;
  if (!split_host_port(o.listen_tcp, &host, &port)) {
    *err = "--listen-tcp must be HOST:PORT (got '" + o.listen_tcp + "')";
    return false;
  }
  p->tcp = o.listen_tcp;
  if (o.insecure_tcp) {
    if (any_tls) {
      *err = "--insecure-tcp and --tls-* exclude each other";
      return false;
    }
    if (!is_loopback(host)) {
      *err = "plain TCP is refused on " + host + ": --insecure-tcp is only allowed on a loopback address";
      return false;
    }
    p->tcp_creds = grpc::InsecureServerCredentials();
    p->tcp_desc = "tcp:" + o.listen_tcp + " (insecure, loopback)";
    return true;
  }
  if (o.tls_cert.empty() || o.tls_key.empty() || o.tls_ca.empty()) {
    *err = "--listen-tcp needs --tls-cert, --tls-key and --tls-ca (clients must present certificates); plain TCP "
           "is refused unless on loopback with --insecure-tcp";
    return false;
  }
  grpc::SslServerCredentialsOptions so(GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
  grpc::SslServerCredentialsOptions::PemKeyCertPair pair;
  if (!read_file(o.tls_ca, &so.pem_root_certs, err) || !read_file(o.tls_key, &pair.private_key, err) ||
      !read_file(o.tls_cert, &pair.cert_chain, err))
    return false;
  so.pem_key_cert_pairs.push_back(pair);
  p->tcp_creds = grpc::SslServerCredentials(so);
  p->tcp_desc = "tcp:" + o.listen_tcp + " (TLS, client certificates required)";
  return true;
}

bool prepare_unix_socket(const ListenPlan& p, std::string* err) {
  std::string dir = p.unix_path.substr(0, p.unix_path.rfind('/'));
  if (!mkdirs(dir)) {
    *err = "cannot create " + dir + ": " + strerror(errno);
    return false;
  }
  struct stat st;
  if (lstat(p.unix_path.c_str(), &st) != 0) return true;
  if (!S_ISSOCK(st.st_mode)) {
    *err = p.unix_path + " exists and is not a socket";
    return false;
  }
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  strncpy(a.sun_path, p.unix_path.c_str(), sizeof a.sun_path - 1);
  bool live = connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  close(fd);
  if (live) {
    *err = "another daemon is listening on " + p.unix_path;
    return false;
  }
  unlink(p.unix_path.c_str());
  return true;
}

bool finish_unix_socket(const ListenPlan& p, std::string* err) {
  if (chmod(p.unix_path.c_str(), p.mode) != 0 ||
      (p.gid != gid_t(-1) && chown(p.unix_path.c_str(), uid_t(-1), p.gid) != 0)) {
    *err = "cannot set the permissions of " + p.unix_path + ": " + strerror(errno);
    return false;
  }
  return true;
}

}  // namespace gpuraid::daemon
