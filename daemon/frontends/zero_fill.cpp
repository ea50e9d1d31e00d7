#include "daemon/frontends/zero_fill.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <string>

#include "daemon/frontends/frontend_log.h"
#include "engine/reactor.h"

namespace gpuraid {

const uint8_t* zero_block() {
  // Anonymous pages read as zero; touching them makes them real pages so
  // that O_DIRECT writes pin ordinary memory, not the shared zero page.
  static const uint8_t* block = [] {
    void* p = mmap(nullptr, ZeroFill::kChunk, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::runtime_error("cannot map the zero block");
    memset(p, 0, ZeroFill::kChunk);
    return static_cast<const uint8_t*>(p);
  }();
  return block;
}

int ZeroFill::start(BlockTarget* t, Reactor& r, uint64_t offset, uint64_t len, bool fua,
                    void (*done)(void*, int), void* ctx) {
  // The zero block is a write's data, which a full-strip write computes
  // parity from in place: a GPU backend maps it, as it maps request buffers
  // (once; registrations are per process and it lives as long).
  static std::once_flag mapped;
  std::call_once(mapped, [&r] {
    std::string why;
    if (!r.parity().register_memory(const_cast<uint8_t*>(zero_block()), kChunk, &why))
      frontend_log("zero fill: parity backend %s cannot map the zero block (%s): its jobs take the staged path\n",
                   r.parity().name(), why.c_str());
  });
  t_ = t;
  r_ = &r;
  next_ = offset;
  end_ = offset + len;
  fua_ = fua;
  done_ = done;
  ctx_ = ctx;
  if (len == 0) {
    // Nothing to write; still complete asynchronously, as every request does.
    req_ = IoRequest{};
    req_.op = IoRequest::Flush;
    req_.done = chunk_done;
    req_.ctx = this;
    end_ = next_;
    return t_->submit(*r_, &req_);
  }
  return issue();
}

int ZeroFill::issue() {
  const uint64_t n = std::min<uint64_t>(kChunk, end_ - next_);
  req_ = IoRequest{};
  req_.op = IoRequest::Write;
  req_.fua = fua_;
  req_.offset = next_;
  req_.length = n;
  req_.buf = const_cast<uint8_t*>(zero_block());  // the engine only reads write buffers
  req_.done = chunk_done;
  req_.ctx = this;
  next_ += n;
  return t_->submit(*r_, &req_);
}

void ZeroFill::chunk_done(IoRequest* req) {
  auto* z = static_cast<ZeroFill*>(req->ctx);
  int rc = req->result;
  if (rc == 0 && z->next_ < z->end_) {
    rc = z->issue();
    if (rc == 0) return;
  }
  z->done_(z->ctx_, rc);
}

}  // namespace gpuraid
