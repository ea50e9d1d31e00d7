// Prometheus metrics over HTTP (cpp-httplib): GET /metrics. Loopback by
// default; the text comes from the control plane.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <thread>

namespace httplib {
class Server;
}

namespace gpuraid::daemon {

class MetricsServer {
 public:
  MetricsServer();
  ~MetricsServer();
  // addr: "PORT" (127.0.0.1) or "HOST:PORT".
  bool start(const std::string& addr, std::function<std::string()> text, std::string* err);
  void stop();
  const std::string& where() const { return where_; }

 private:
  std::unique_ptr<httplib::Server> srv_;
  std::thread th_;
  std::string where_;
};

}  // namespace gpuraid::daemon
