// An NBD server for one export: a listener thread on a Unix socket or a
// TCP port (loopback unless a host is named), a short-lived thread per
// client for the handshake, then the connection on a reactor (round-robin).
#pragma once
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "daemon/frontends/nbd_connection.h"
#include "daemon/frontends/nbd_tls.h"
#include "engine/engine.h"

namespace gpuraid {

// Limits against a hostile or broken client (per export).
// A Unix socket file, by inode: what a server made (and may remove).
struct NbdSocketId {
  uint64_t dev = 0, ino = 0;
};

struct NbdLimits {
  uint32_t max_connections = 64;      // handshaking and serving; more are closed at accept
  uint32_t handshake_timeout_ms = 10000;  // the whole handshake (TLS included), not per read
  uint64_t max_inflight_bytes = 16ull << 20;  // buffer bytes per connection (NbdConnection)
};

class NbdServer {
 public:
  // listen: "unix:PATH" or "tcp:[HOST:]PORT" (HOST defaults to 127.0.0.1;
  // PORT 0 picks a free one). *uri gets the address clients use (nbds://
  // or nbds+unix:// when TLS is required).
  static std::unique_ptr<NbdServer> start(Engine& engine, BlockTarget* target, const std::string& name,
                                          const std::string& listen, const NbdTlsConfig& tls,
                                          const NbdLimits& limits, std::string* uri, std::string* err);
  ~NbdServer();  // closes the listener and every connection, waits for them
  // Stops listening and ends every connection cleanly (NbdConnection::drain:
  // in-flight requests answered, new ones NBD_ESHUTDOWN), waiting up to
  // timeout_ms for them to close; the destructor closes what is left.
  void drain(int timeout_ms);
  size_t connection_count();

 private:
  // The lock and wake-up that connections' close callbacks use. Shared with
  // those callbacks, which run on reactors: a connection that outlives its
  // server (leaked because it never closed) still signals something alive.
  struct Sync {
    std::mutex mu;
    std::condition_variable cv;
  };
  struct Client {
    int fd;
    std::chrono::steady_clock::time_point since;  // accepted
    bool expired = false;                          // its handshake ran out of time
    std::thread handshake;
    std::atomic<bool> handshake_done{false};
    std::unique_ptr<NbdTlsPump> tls;  // a TLS client: conn serves the pump's plain end
    std::unique_ptr<NbdConnection> conn;
  };
  NbdServer(Engine& e, BlockTarget* t) : engine_(e), target_(t) {}
  void accept_loop();
  void serve(Client* c);
  void reap(bool all);
  void stop_listening();
  bool admit();               // under mu_: room for one more client?
  void expire_handshakes();   // under mu_: the handshake timeout

  Engine& engine_;
  BlockTarget* target_;
  NbdExportInfo info_;
  std::unique_ptr<NbdTlsContext> tls_;  // null: TLS off
  NbdLimits limits_;
  std::string unix_path_;
  NbdSocketId unix_id_;  // the socket file it made (removed at the end only if still that one)
  int listen_fd_ = -1;
  int wake_[2] = {-1, -1};
  std::thread listener_;
  std::atomic<bool> stopping_{false};
  std::atomic<bool> draining_{false};  // connections made while stopping are drained, not killed
  std::shared_ptr<Sync> sync_ = std::make_shared<Sync>();
  std::mutex& mu_ = sync_->mu;
  std::condition_variable& cv_ = sync_->cv;
  std::list<Client> clients_;
  uint32_t next_reactor_ = 0;
};

}  // namespace gpuraid
