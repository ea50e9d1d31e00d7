#include "daemon/metrics_http.h"

#include <httplib.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>

#include "daemon/listeners.h"
#include "engine/thread_name.h"

namespace gpuraid::daemon {

MetricsServer::MetricsServer() = default;
MetricsServer::~MetricsServer() { stop(); }

bool MetricsServer::start(const std::string& addr, std::function<std::string()> text, std::string* err) {
  std::string host = "127.0.0.1";
  int port = 0;
  bool port_only = addr.find(':') == std::string::npos;
  if (port_only ? (addr.empty() || addr.size() > 5 || addr.find_first_not_of("0123456789") != std::string::npos ||
                   (port = std::stoi(addr)) <= 0 || port > 65535)
                : !split_host_port(addr, &host, &port)) {
    *err = "--metrics must be PORT or HOST:PORT (got '" + addr + "')";
    return false;
  }
  srv_ = std::make_unique<httplib::Server>();
  // httplib's default sets SO_REUSEPORT too, which lets a second daemon bind
  // the same port and share the scrapes: only SO_REUSEADDR (a restart may
  // bind while old connections linger in TIME_WAIT).
  srv_->set_socket_options([](int sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  });
  srv_->Get("/metrics", [text](const httplib::Request&, httplib::Response& res) {
    res.set_content(text(), "text/plain; version=0.0.4");
  });
  if (!srv_->bind_to_port(host.c_str(), port)) {
    *err = "cannot listen for metrics on " + host + ":" + std::to_string(port) + ": " + strerror(errno) +
           (errno == EADDRINUSE ? " (another gpuraidd, or another program, listens there)" : "");
    return false;
  }
  where_ = "http://" + host + ":" + std::to_string(port) + "/metrics";
  th_ = std::thread([this] {
    set_thread_name("gpuraid-http");
    srv_->listen_after_bind();
  });
  return true;
}

void MetricsServer::stop() {
  if (srv_) srv_->stop();
  if (th_.joinable()) th_.join();
}

}  // namespace gpuraid::daemon
