#include "engine/sync_io.h"

namespace gpuraid {

int sync_io(Volume& v, Reactor& r, IoRequest::Op op, uint64_t off, uint64_t len, uint8_t* buf, bool fua) {
  IoRequest q;
  q.op = op;
  q.offset = off;
  q.length = len;
  q.buf = buf;
  q.fua = fua;
  bool done = false;
  q.ctx = &done;
  q.done = [](IoRequest* x) { *static_cast<bool*>(x->ctx) = true; };
  if (int rc = v.submit(r, &q); rc) return rc;
  while (!done) r.poll(true, 5);
  return q.result;
}

}  // namespace gpuraid
