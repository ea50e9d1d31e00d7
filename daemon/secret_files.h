// Secrets the daemon keeps across restarts (the DH-HMAC-CHAP keys of
// NVMe-oF exports): one file each in <state dir>/secrets (0700), the file
// 0600, replaced atomically (temporary file, fsync, rename). They are never
// in the registry, the API's answers or the log: the registry only says
// that an export has one.
#pragma once
#include <string>

namespace gpuraid::daemon {

class SecretFiles {
 public:
  explicit SecretFiles(std::string dir) : dir_(std::move(dir)) {}
  const std::string& dir() const { return dir_; }
  // The file of secret `name` (a file name: letters, digits, '.', '-', '_').
  std::string path(const std::string& name) const { return dir_ + "/" + name; }

  bool save(const std::string& name, const std::string& secret, std::string* err) const;
  // False and *err (which names the file, never its content) when missing
  // or unreadable.
  bool load(const std::string& name, std::string* secret, std::string* err) const;
  // A missing file is no error.
  bool remove(const std::string& name, std::string* err) const;

 private:
  std::string dir_;
};

}  // namespace gpuraid::daemon
