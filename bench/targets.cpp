#include "bench/targets.h"

#include <cerrno>

#include "engine/reactor.h"

namespace gpuraid::bench {

static void raw_done(MemberIo* io) {
  auto* req = static_cast<IoRequest*>(io->ctx);
  req->result = io->res < 0 ? io->res : 0;
  io->ctx = nullptr;
  req->home->free_io(io);
  req->done(req);
}

int RawTarget::submit(Reactor& r, IoRequest* req) {
  const uint32_t n = v_.geometry().members;
  const uint64_t piece = req->offset / bs_;
  if (req->op != IoRequest::Flush && (req->offset + req->length - 1) / bs_ != piece) return -EINVAL;
  const uint32_t m = uint32_t(piece % n);
  r.claim();
  MemberIo* io = r.alloc_io();
  io->kind = req->op == IoRequest::Read ? MemberIo::Read : req->op == IoRequest::Write ? MemberIo::Write : MemberIo::Flush;
  io->drive = v_.member(m);
  io->slot = v_.member_slot(m);
  io->offset = v_.data_offset() + piece / n * bs_ + req->offset % bs_;
  io->len = uint32_t(req->length);
  io->buf = req->buf;
  io->dsync = req->fua;
  io->ctx = req;
  io->done = raw_done;
  req->home = &r;
  r.submit(io);
  return 0;
}

}  // namespace gpuraid::bench
