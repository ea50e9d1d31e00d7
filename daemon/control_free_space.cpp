// A rebuild stopped at a block it cannot rebuild (a medium error on a
// survivor that no redundancy covers) gets past it once the stripes there
// are written whole. Where virtual drives hold those stripes the operator
// writes them (the event names each VD's bytes); where none does, nobody
// can: no VD reaches those bytes. Nobody's data is there either, so the
// daemon writes zeros over those stripes itself (whole stripes: VDs never
// share one) and, where the whole stopped run was free, starts the rebuild
// again. Once per run: a run that stops again where zeros were written
// (a drive that does not remap the block) is left to the operator.
#include <cstdlib>
#include <cstring>

#include "daemon/control_plane.h"
#include "daemon/free_gaps.h"
#include "daemon/logging.h"
#include "engine/block_target.h"
#include "engine/units.h"

namespace gpuraid::daemon {

namespace {
using Extent = std::pair<uint64_t, uint64_t>;  // [start, end) of a group's data bytes

bool overlaps(const std::vector<Extent>& a, const std::vector<Extent>& b) {
  for (auto& x : a)
    for (auto& y : b)
      if (x.first < y.second && y.first < x.second) return true;
  return false;
}

std::string extents_text(const std::vector<Extent>& ex) {
  std::string s;
  for (auto& [a, b] : ex) s += std::string(s.empty() ? "" : ", ") + std::to_string(a) + "-" + std::to_string(b - 1);
  return s;
}
}  // namespace

std::vector<std::pair<uint64_t, uint64_t>> ControlPlane::free_extents(const std::string& group, uint64_t off,
                                                                      uint64_t len) const {
  std::vector<std::pair<uint64_t, uint64_t>> used;
  for (const auto& [id, v] : volumes_)
    if (v.r.group() == group) used.push_back({v.r.offset_bytes(), v.r.size_bytes()});
  return free_gaps(used, off, off + len);
}

std::string ControlPlane::plan_free_space_zeroing(GroupRec& gr, const GroupEvent& ev) {
  std::vector<Extent> free = free_extents(gr.r.name(), ev.data_offset, ev.data_bytes);
  if (free.empty()) return "";
  const bool whole = free.size() == 1 && free[0] == Extent{ev.data_offset, ev.data_offset + ev.data_bytes};
  const std::string what = whole ? "them" : "the free space among them (data bytes " + extents_text(free) + ")";
  if (overlaps(free, gr.zeroed)) {
    return "; zeros the daemon wrote over " + what + " did not make the block readable (its drive did not remap "
           "it): copy the group's virtual drives off, or start the rebuild again (gpuraid dg rebuild " +
           gr.r.name() + " start) once that drive reads there";
  }
  gr.zeroing = free;
  gr.zeroing_whole_run = whole;
  zero_queue_.push_back(gr.r.name());
  return whole ? ": the daemon writes zeros over them (no one's data is there) and starts the rebuild again"
               : "; the daemon writes zeros over " + what + ", which no virtual drive holds";
}

void ControlPlane::zero_queued_free_space() {
  std::vector<std::string> groups;
  {
    std::lock_guard<std::mutex> g(mu_);
    groups.swap(zero_queue_);
  }
  for (auto& name : groups) zero_free_space(name);
}

void ControlPlane::zero_free_space(const std::string& group) {
  // Shared: a group is not deleted, nor a VD resized, while its stripes are
  // written (as debug I/O does); vd create leaves out what is being zeroed.
  std::shared_lock<std::shared_mutex> td(teardown_mu_);
  std::vector<Extent> ex;
  Volume* vol = nullptr;
  {
    std::lock_guard<std::mutex> g(mu_);
    auto it = groups_.find(group);
    if (it == groups_.end()) return;
    ex = it->second.zeroing;
    if (!it->second.g) {
      it->second.zeroing.clear();
      return;
    }
    vol = &it->second.g->volume();
  }
  const uint64_t sdb = vol->geometry().stripe_data_bytes();
  const uint64_t chunk = std::max<uint64_t>(sdb, (uint64_t(4) << 20) / sdb * sdb);
  uint8_t* zeros = static_cast<uint8_t*>(aligned_alloc(kBlockSize, chunk));
  memset(zeros, 0, chunk);
  VolumeExtent whole(*vol, 0, vol->size_bytes());
  std::string why;
  int rc = 0;
  for (auto& [a, b] : ex)
    for (uint64_t at = a; at < b && rc == 0; at += chunk)
      rc = host_.io(whole, IoRequest::Write, at, std::min(chunk, b - at), zeros, false, &why);
  free(zeros);
  std::lock_guard<std::mutex> g(mu_);
  auto it = groups_.find(group);
  if (it == groups_.end()) return;
  GroupRec& gr = it->second;
  gr.zeroing.clear();
  const std::string where =
      "group " + group + ": the free space a stopped rebuild names (data bytes " + extents_text(ex) + ")";
  if (rc != 0) {
    spdlog::error("{}: cannot write zeros over it: {}", where, why.empty() ? strerror(-rc) : why);
    gr.note = "the rebuild stopped at a block it cannot rebuild and the daemon could not write zeros over the free "
              "space there (data bytes " + extents_text(ex) + "): " + (why.empty() ? strerror(-rc) : why);
    return;
  }
  gr.zeroed.insert(gr.zeroed.end(), ex.begin(), ex.end());
  spdlog::warn("{}: zeros written over it", where);
  if (!gr.zeroing_whole_run || !gr.g) return;  // the operator writes the VDs' bytes, then starts it
  std::string err;
  if (!gr.g->restart_rebuild(&err)) spdlog::error("group {}: cannot start the rebuild again: {}", group, err);
}

}  // namespace gpuraid::daemon
