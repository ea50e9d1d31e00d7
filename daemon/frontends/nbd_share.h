// The fair share of a reactor's arena among the NBD connections it serves
// (issue 19). A connection's data buffers come from its reactor's arena; a
// client that sends requests and never reads the replies keeps what it took.
// A fixed cap per connection bounds one such client, not several: four of
// them at a quarter of the arena each leave nothing to a fifth, polite one.
// So the connections of a reactor share half its arena (the other half stays
// for ublk and the engine's own buffers): each may hold at most
// budget / connections (and its --nbd-max-inflight), and all of them together
// at most the budget. A connection over its share (the share shrank as others
// came) takes nothing more until it is under it again; what is freed goes to
// those under theirs. A connection that holds nothing may always take one
// request, so every client makes progress while the arena has room.
//
// One per reactor, used only on that reactor's thread (connections join on
// start and leave as they close there): no locking.
#pragma once
#include <cstdint>

namespace gpuraid {

class Reactor;

class NbdShare {
 public:
  explicit NbdShare(uint64_t budget) : budget_(budget) {}
  // The share of the reactor r (created on first use, kept for the process).
  static NbdShare& of(Reactor& r);

  void join() { conns_++; }
  void leave() { conns_--; }
  // What a connection may hold now: budget / connections, at most cap.
  uint64_t share(uint64_t cap) const;
  enum Verdict { kAdmit, kOverShare, kBudgetFull };
  // Whether a connection holding `held` (capped at `cap`) may take `len` more.
  Verdict admit(uint64_t held, uint64_t len, uint64_t cap) const;
  void take(uint64_t len) { held_ += len; }
  void give(uint64_t len) { held_ -= len; }
  uint64_t held() const { return held_; }

 private:
  const uint64_t budget_;
  uint32_t conns_ = 0;
  uint64_t held_ = 0;  // buffer bytes held by every connection of the reactor
};

}  // namespace gpuraid
