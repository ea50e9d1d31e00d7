#include "daemon_fixture.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <thread>

#ifndef GPURAIDD_PATH
#error "GPURAIDD_PATH must name the gpuraidd binary"
#endif

namespace gpuraid::e2e {

DaemonProcess::DaemonProcess() {
  char t[] = "/tmp/gpuraid-e2e-XXXXXX";
  if (mkdtemp(t)) dir_ = t;
}

DaemonProcess::~DaemonProcess() {
  stop();
  print_sanitizer_report();
  std::error_code ec;
  if (!dir_.empty()) std::filesystem::remove_all(dir_, ec);
}

bool DaemonProcess::start(std::string* err) {
  std::string log = dir_ + "/daemon.log";
  pid_ = fork();
  if (pid_ == 0) {
    FILE* f = freopen(log.c_str(), "a", stderr);
    (void)f;
    std::string state = dir_ + "/state", sock = socket();
    execl(GPURAIDD_PATH, "gpuraidd", "--state-dir", state.c_str(), "--socket", sock.c_str(), "--log-level", "warn",
          nullptr);
    _exit(127);
  }
  auto ch = channel();
  auto deadline = std::chrono::system_clock::now() + std::chrono::seconds(20);
  while (std::chrono::system_clock::now() < deadline) {
    if (!alive()) {
      *err = "gpuraidd exited at start (see " + log + ")";
      return false;
    }
    if (ch->WaitForConnected(std::chrono::system_clock::now() + std::chrono::milliseconds(200))) return true;
  }
  *err = "gpuraidd did not come up within 20 s";
  return false;
}

void DaemonProcess::print_sanitizer_report() const {
  // A sanitized daemon (scripts/sanitize.sh asan) writes its report to the
  // log, which goes with the directory: show it first.
  std::ifstream in(dir_ + "/daemon.log");
  std::string line;
  bool report = false;
  while (std::getline(in, line)) {
    report = report || line.find("Sanitizer") != std::string::npos || line.find("runtime error:") != std::string::npos;
    if (report) fprintf(stderr, "daemon.log: %s\n", line.c_str());
  }
}

bool DaemonProcess::alive() const { return pid_ > 0 && waitpid(pid_, nullptr, WNOHANG) == 0; }

int DaemonProcess::stop() {
  if (pid_ <= 0) return -1;
  kill(pid_, SIGTERM);
  int st = 0;
  waitpid(pid_, &st, 0);
  pid_ = -1;
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

std::shared_ptr<grpc::Channel> DaemonProcess::channel() const {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(64 << 20);
  args.SetMaxSendMessageSize(64 << 20);
  return grpc::CreateCustomChannel("unix:" + socket(), grpc::InsecureChannelCredentials(), args);
}

std::unique_ptr<gpuraid::v1::Gpuraid::Stub> DaemonProcess::stub() const {
  return gpuraid::v1::Gpuraid::NewStub(channel());
}

}  // namespace gpuraid::e2e
