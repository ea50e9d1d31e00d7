// Replay of the write-hole guard's log at assembly after an unclean stop:
// every entry of a stripe that may have been torn rewrites its parity row
// from the partial parity and the logged ranges as they are on disk, so
// parity matches the data again, even with members missing.
#pragma once
#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "engine/codec.h"
#include "engine/geometry.h"
#include "engine/io/drive.h"
#include "engine/ppl/ppl_format.h"

namespace gpuraid {

struct PplReplayStats {
  uint64_t entries = 0;       // valid entries of this group read
  uint64_t rows_written = 0;  // parity rows rewritten
  uint64_t stripes_skipped = 0;  // entries of a write whose log writes the stop tore (left as they are)
  // Blocks of torn stripes their member could not read (a medium error):
  // rebuilt from the parity as a lost member's are, left for the resync to write back.
  uint64_t unreadable_blocks = 0;
  // The replay failed because a block of a log could not be read (a medium
  // error): which stripes the stop tore is not known.
  bool log_unreadable = false;
};

// Where the log is and how it was written: format 2 (a slot per stripe) or
// 3 (batched pieces in a ring, entries at or above seq_floor are this
// group's last run's; superblock fields ppl_format, ppl_seq_floor).
struct PplLogOnDisk {
  PplLayout layout;
  uint32_t format = 3;
  uint64_t seq_floor = 0;
};

// Declustered groups with members in the distributed spare room: the index
// of the member whose drive holds `member`'s strip of `stripe` (the spare
// strip of its row there), kPplNotInRoom for a member not in the room (its
// own drive), kPplUnavailable where that strip cannot be read (its drive
// failed, or a rebuild into the room has not reached it). Such a member's
// parity row is logged in the log of the drive holding its strip.
using PplRoomRoute = std::function<int(uint32_t member, uint64_t stripe)>;
constexpr int kPplNotInRoom = -1, kPplUnavailable = -2;

// members[i]: member i's drive, or null when it is not usable (failed,
// missing, being rebuilt): its log is not read, and where one such member
// was being written the rows are made to agree on the bytes the first
// logged row on disk gives it (they were being written; ppl_replay.cpp). Only stripes for which torn(stripe)
// is true are replayed: of a stripe's writes, the newest one whose entry
// every usable parity member holds whole (format 2: the only one, when the
// slots' entries are of one write). The members written are flushed. A
// block of a torn stripe's written range that a member cannot read (a
// medium error) is taken as that member's, lost (unreadable_blocks). False
// (err set) on a read, write or flush error: the caller must not start the
// group as consistent (st->log_unreadable: a log's medium error; what the
// replay wrote so far is consistent, the rest is as the stop left it).
bool ppl_replay(const Geometry& g, const Codec& c, const PplLogOnDisk& log, const std::array<uint8_t, 16>& group,
                uint64_t data_offset, const std::vector<Drive*>& members,
                const std::function<bool(uint64_t stripe)>& torn, PplReplayStats* st, std::string* err,
                const PplRoomRoute& room = {});

// Zeroes d's whole log area: no entry there is trusted any more. For
// a drive that (re)joins as a member being rebuilt, whose old entries name
// stripes it did not follow since, and for a new group.
bool ppl_invalidate(Drive& d, const PplLayout& l, std::string* err);

}  // namespace gpuraid
