#include "daemon/frontends/nbd_server.h"
#include "daemon/frontends/frontend_log.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

#include "daemon/frontends/nbd_proto.h"
#include "engine/thread_name.h"

namespace gpuraid {

namespace {

// Whether a process listens on the Unix socket at `path` now.
bool socket_alive(const sockaddr_un& a) {
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  const bool alive = connect(fd, reinterpret_cast<const sockaddr*>(&a), sizeof a) == 0 || errno == EAGAIN;
  close(fd);
  return alive;
}

// *made: the socket's inode, so that only this one is ever removed.
int listen_unix(const std::string& path, NbdSocketId* made, std::string* err) {
  sockaddr_un a{};
  if (path.empty() || path.size() >= sizeof a.sun_path) return *err = "bad Unix socket path '" + path + "'", -1;
  a.sun_family = AF_UNIX;
  memcpy(a.sun_path, path.c_str(), path.size());
  struct stat st;
  if (lstat(path.c_str(), &st) == 0) {
    if (!S_ISSOCK(st.st_mode)) return *err = path + " exists and is not a socket", -1;
    // Another process (another gpuraidd) serves it: never take it away.
    if (socket_alive(a)) return *err = path + " is in use: another process listens on it", -1;
    unlink(path.c_str());  // a stale socket of an earlier run
  }
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || listen(fd, 64) != 0 || lstat(path.c_str(), &st) != 0) {
    *err = "cannot listen on " + path + ": " + strerror(errno);
    close(fd);
    return -1;
  }
  *made = {uint64_t(st.st_dev), uint64_t(st.st_ino)};
  return fd;
}

int listen_tcp(const std::string& spec, std::string* host_out, int* port_out, std::string* err) {
  // spec: "PORT" or "HOST:PORT" ("[v6]:PORT" too).
  std::string host = "127.0.0.1", port = spec;
  const size_t colon = spec.rfind(':');
  if (colon != std::string::npos) {
    host = spec.substr(0, colon);
    port = spec.substr(colon + 1);
    if (host.size() > 1 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
    if (host.empty()) host = "127.0.0.1";
  }
  addrinfo hints{}, *res = nullptr;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  if (int r = getaddrinfo(host.c_str(), port.c_str(), &hints, &res); r != 0)
    return *err = "bad TCP address '" + spec + "': " + gai_strerror(r), -1;
  int fd = socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (bind(fd, res->ai_addr, res->ai_addrlen) != 0 || listen(fd, 64) != 0) {
    *err = "cannot listen on " + spec + ": " + strerror(errno);
    freeaddrinfo(res);
    close(fd);
    return -1;
  }
  freeaddrinfo(res);
  sockaddr_storage ss{};
  socklen_t sl = sizeof ss;
  getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &sl);
  *port_out = ntohs(ss.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&ss)->sin6_port
                                             : reinterpret_cast<sockaddr_in*>(&ss)->sin_port);
  *host_out = host.find(':') != std::string::npos ? "[" + host + "]" : host;
  return fd;
}

}  // namespace

std::unique_ptr<NbdServer> NbdServer::start(Engine& engine, BlockTarget* target, const std::string& name,
                                            const std::string& listen, const NbdTlsConfig& tls,
                                            const NbdLimits& limits, std::string* uri, std::string* err) {
  std::unique_ptr<NbdServer> s(new NbdServer(engine, target));
  s->limits_ = limits;
  if (tls.mode != NbdTlsConfig::Mode::Off || !tls.cert.empty() || !tls.psk.empty()) {
    if (!(s->tls_ = NbdTlsContext::create(tls, err))) return nullptr;
    if (tls.mode == NbdTlsConfig::Mode::Off) s->tls_.reset();
  }
  // libnbd's scheme for "TLS required" (nbds: fails rather than fall back).
  const std::string tls_s = tls.mode == NbdTlsConfig::Mode::Require ? "s" : "";
  s->info_.name = name;
  s->info_.size = target->size_bytes();
  s->info_.preferred_block = std::max<uint32_t>(4096, std::min<uint32_t>(target->min_io_bytes(), 1u << 20));
  s->info_.tx_flags = nbd::kTxHasFlags | nbd::kTxSendFlush | nbd::kTxSendFua | nbd::kTxSendTrim |
                      nbd::kTxSendWriteZeroes | nbd::kTxCanMultiConn;  // a flush covers every connection
  if (listen.rfind("unix:", 0) == 0) {
    s->unix_path_ = listen.substr(5);
    if ((s->listen_fd_ = listen_unix(s->unix_path_, &s->unix_id_, err)) < 0) {
      s->unix_path_.clear();
      return nullptr;
    }
    *uri = "nbd" + tls_s + "+unix:///" + name + "?socket=" + s->unix_path_;
  } else if (listen.rfind("tcp:", 0) == 0) {
    std::string host;
    int port = 0;
    if ((s->listen_fd_ = listen_tcp(listen.substr(4), &host, &port, err)) < 0) return nullptr;
    *uri = "nbd" + tls_s + "://" + host + ":" + std::to_string(port) + "/" + name;
  } else {
    *err = "listen address must be unix:PATH or tcp:[HOST:]PORT, not '" + listen + "'";
    return nullptr;
  }
  if (pipe2(s->wake_, O_CLOEXEC) != 0) return *err = "pipe failed", nullptr;
  s->listener_ = std::thread([p = s.get()] {
    set_thread_name("gpuraid-nbd");
    p->accept_loop();
  });
  return s;
}

void NbdServer::accept_loop() {
  while (!stopping_) {
    pollfd p[2] = {{listen_fd_, POLLIN, 0}, {wake_[0], POLLIN, 0}};
    int n = poll(p, 2, 200);
    reap(false);
    {
      std::lock_guard<std::mutex> g(mu_);
      expire_handshakes();
    }
    if (n <= 0 || !(p[0].revents & POLLIN)) continue;
    int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    std::lock_guard<std::mutex> g(mu_);
    if (!admit()) {
      close(fd);
      continue;
    }
    clients_.emplace_back();
    Client* c = &clients_.back();
    c->fd = fd;
    c->since = std::chrono::steady_clock::now();
    c->handshake = std::thread([this, c] {
      set_thread_name("gpuraid-nbd-hs");
      serve(c);
    });
  }
}

bool NbdServer::admit() {
  // A handshake cut off at its timeout is dropped (its socket shut down)
  // even while its thread is still winding down: the client already sees
  // the end, and may connect again at once.
  size_t live = 0;
  for (auto& c : clients_)
    if ((!c.handshake_done && !c.expired) || (c.conn && !c.conn->closed())) live++;
  if (live < limits_.max_connections) return true;
  frontend_log("nbd: export '%s': connection refused: %zu connections already (the limit)\n", info_.name.c_str(),
          live);
  return false;
}

// A client still in its handshake after the timeout is cut off (its socket
// shut down: the handshake thread's read fails and it cleans up), however
// slowly it trickles bytes in.
void NbdServer::expire_handshakes() {
  const auto now = std::chrono::steady_clock::now();
  for (auto& c : clients_)
    if (!c.handshake_done && !c.conn && c.fd >= 0 && !c.expired &&
        now - c.since > std::chrono::milliseconds(limits_.handshake_timeout_ms)) {
      shutdown(c.fd, SHUT_RDWR);
      c.expired = true;
      frontend_log("nbd: export '%s': a client did not finish its handshake in %u ms: dropped\n",
              info_.name.c_str(), limits_.handshake_timeout_ms);
    }
}

void NbdServer::serve(Client* c) {
  // A silent client must not hold its thread forever (expire_handshakes
  // bounds the whole handshake).
  const uint32_t t_ms = std::max<uint32_t>(limits_.handshake_timeout_ms, 1);
  timeval tv{time_t(t_ms / 1000), suseconds_t(t_ms % 1000 * 1000)};
  setsockopt(c->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  setsockopt(c->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  int one = 1;
  setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);  // fails harmlessly on Unix sockets
  std::string why;
  std::unique_ptr<NbdTlsSession> session;
  int serve_fd = -1;
  bool ok = nbd_handshake(c->fd, info_, tls_.get(), &session, &why);
  if (ok) {
    timeval zero{0, 0};
    setsockopt(c->fd, SOL_SOCKET, SO_RCVTIMEO, &zero, sizeof zero);
    setsockopt(c->fd, SOL_SOCKET, SO_SNDTIMEO, &zero, sizeof zero);
    serve_fd = c->fd;
    if (session) {
      // The pump owns the socket from here; the reactor serves its plain end.
      std::lock_guard<std::mutex> g(mu_);
      c->tls = NbdTlsPump::start(std::move(session), c->fd, &serve_fd, &why);
      if (!c->tls) ok = false;
    }
  }
  if (!ok) {
    if (why != "client aborted the handshake" && !stopping_)
      frontend_log("nbd: export '%s': handshake failed: %s\n", info_.name.c_str(), why.c_str());
    std::lock_guard<std::mutex> g(mu_);
    close(c->fd);
    c->fd = -1;
  } else {
    std::lock_guard<std::mutex> g(mu_);
    Reactor& r = engine_.reactor(next_reactor_++ % engine_.reactor_count());
    // Runs on the reactor as the connection closes; the server may be gone
    // by then (a connection it had to leak), so it touches only Sync.
    c->conn = std::make_unique<NbdConnection>(serve_fd, r, target_, info_, limits_.max_inflight_bytes,
                                              [sync = sync_] {
      std::lock_guard<std::mutex> g2(sync->mu);
      sync->cv.notify_all();
    });
    c->conn->start();
    if (stopping_) {
      if (draining_) c->conn->drain();
      else c->conn->kill();
    }
  }
  std::lock_guard<std::mutex> g(mu_);
  c->handshake_done = true;
  cv_.notify_all();
}

// Frees clients whose handshake failed or whose connection has closed;
// with `all`, every client (at shutdown, after the connections were told to close).
void NbdServer::reap(bool all) {
  std::list<Client> gone;
  {
    std::lock_guard<std::mutex> g(mu_);
    for (auto it = clients_.begin(); it != clients_.end();) {
      auto next = std::next(it);
      if (all || (it->handshake_done && (!it->conn || it->conn->closed()))) gone.splice(gone.end(), clients_, it);
      it = next;
    }
  }
  for (auto& c : gone) {
    if (c.handshake.joinable()) c.handshake.join();  // ends within the socket timeout
    if (!c.conn) continue;
    if (!c.conn->closed()) {
      // Its reactor still references it: leaking beats a use after free.
      frontend_log("nbd: export '%s': a connection did not close; leaking it\n", info_.name.c_str());
      (void)c.conn.release();
      (void)c.tls.release();  // its pump threads still run on the connection's end
    } else {
      // Freed on its reactor, after whatever that reactor still runs for it
      // (its close callback may not even have returned yet).
      NbdConnection::dispose(std::move(c.conn));
    }
    c.tls.reset();  // joins the pump (its plain end is closed: it ends)
  }
}

size_t NbdServer::connection_count() {
  std::lock_guard<std::mutex> g(mu_);
  size_t n = 0;
  for (auto& c : clients_)
    if (c.conn && !c.conn->closed()) n++;
  return n;
}

void NbdServer::stop_listening() {
  stopping_ = true;
  if (listener_.joinable()) {
    [[maybe_unused]] ssize_t n = write(wake_[1], "x", 1);
    listener_.join();
  }
  if (listen_fd_ >= 0) close(listen_fd_);
  listen_fd_ = -1;
  // Only the socket this server made: one that replaced it (another
  // process's, after ours was removed behind our back) stays.
  struct stat st;
  if (!unix_path_.empty() && lstat(unix_path_.c_str(), &st) == 0 && uint64_t(st.st_dev) == unix_id_.dev &&
      uint64_t(st.st_ino) == unix_id_.ino)
    unlink(unix_path_.c_str());
  unix_path_.clear();
}

void NbdServer::drain(int timeout_ms) {
  draining_ = true;
  stop_listening();
  std::unique_lock<std::mutex> g(mu_);
  for (auto& c : clients_) {
    if (c.conn) c.conn->drain();
    else if (!c.handshake_done && c.fd >= 0) shutdown(c.fd, SHUT_RDWR);  // not serving yet: nothing in flight
  }
  auto all_closed = [&] {
    for (auto& c : clients_)
      if (!c.handshake_done || (c.conn && !c.conn->closed())) return false;
    return true;
  };
  // A busy client is told (NBD_ESHUTDOWN) within this grace; one that sent
  // nothing meanwhile is idle and closed.
  const int grace_ms = std::min(timeout_ms, 1000);
  if (cv_.wait_for(g, std::chrono::milliseconds(grace_ms), all_closed)) return;
  for (auto& c : clients_)
    if (c.conn && !c.conn->closed()) c.conn->close_if_idle();
  cv_.wait_for(g, std::chrono::milliseconds(timeout_ms - grace_ms), all_closed);
}

NbdServer::~NbdServer() {
  stop_listening();
  {
    // Wake handshakes blocked in recv, and close live connections.
    std::unique_lock<std::mutex> g(mu_);
    for (auto& c : clients_) {
      if (c.conn) c.conn->kill();
      else if (!c.handshake_done && c.fd >= 0) shutdown(c.fd, SHUT_RDWR);
    }
    cv_.wait_for(g, std::chrono::seconds(30), [&] {
      for (auto& c : clients_) {
        if (!c.handshake_done) {
          if (c.fd >= 0 && !c.conn) shutdown(c.fd, SHUT_RDWR);
          return false;
        }
        if (c.conn && !c.conn->closed()) {
          c.conn->kill();
          return false;
        }
      }
      return true;
    });
  }
  reap(true);
  for (int fd : wake_)
    if (fd >= 0) close(fd);
}

}  // namespace gpuraid
