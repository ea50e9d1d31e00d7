// The event log on disk: STATE_DIR/events.jsonl, one event a line in the
// API's JSON mapping (as `gpuraid events --json` prints it). Each event is
// appended with one write(2) before anyone sees it, so a SIGKILL loses no
// published event; fdatasync runs from sync() (about once a second), so a
// power loss or kernel crash may lose the last second's events. Past
// max_bytes the file becomes events.jsonl.1 (replacing the one before) and
// a new one begins: at most about twice max_bytes on disk.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "gpuraid/v1/gpuraid.pb.h"

namespace gpuraid::daemon {

// One event as one JSON line (with its newline): the API's JSON mapping with
// proto field names, as the event log and the event hook's stdin carry it.
std::string event_json(const gpuraid::v1::Event& e);

class EventLog {
 public:
  static constexpr const char* kFile = "events.jsonl";
  EventLog(std::string dir, uint64_t max_bytes);
  ~EventLog();
  // Reads both files (oldest first): the last `keep` events into *recent and
  // the highest seq; cuts a torn last line (a crash in the middle of a
  // write). Then opens the file for appending. False only when it cannot.
  bool open(size_t keep, std::vector<gpuraid::v1::Event>* recent, uint64_t* last_seq, std::string* err);
  // Appends (rotating first when the file is full).
  bool append(const gpuraid::v1::Event& e, std::string* err);
  // fdatasync (and the directory after a rotation) when something changed.
  bool sync(std::string* err);
  const std::string& path() const { return path_; }

 private:
  bool rotate(std::string* err);
  std::string dir_, path_;
  uint64_t max_bytes_;
  uint64_t size_ = 0;
  int fd_ = -1;
  bool dirty_ = false, dir_dirty_ = false;
};

}  // namespace gpuraid::daemon
