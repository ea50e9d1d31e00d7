// Test helpers: a real gpuraidd on a temporary state dir and socket,
// started and stopped by the test, and a stub connected to it.
#pragma once
#include <grpcpp/grpcpp.h>
#include <sys/types.h>

#include <memory>
#include <string>

#include "gpuraid/v1/gpuraid.grpc.pb.h"

namespace gpuraid::e2e {

class DaemonProcess {
 public:
  DaemonProcess();  // makes the temporary directory
  ~DaemonProcess();  // stops the daemon (if running), removes the directory
  bool start(std::string* err);
  // SIGTERM and wait; returns the exit status (-1 if it did not exit normally).
  int stop();
  bool alive() const;
  pid_t pid() const { return pid_; }
  const std::string& dir() const { return dir_; }
  std::string socket() const { return dir_ + "/gpuraid.sock"; }
  std::shared_ptr<grpc::Channel> channel() const;
  std::unique_ptr<gpuraid::v1::Gpuraid::Stub> stub() const;

 private:
  void print_sanitizer_report() const;  // from the daemon's log, if there is one
  std::string dir_;
  pid_t pid_ = -1;
};

}  // namespace gpuraid::e2e
