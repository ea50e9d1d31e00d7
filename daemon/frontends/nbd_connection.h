// One NBD client connection in the transmission phase, served entirely on
// one reactor: recv and sendmsg SQEs on the reactor's io_uring next to the
// member I/O, requests straight into the block target, replies batched
// into one sendmsg per turn. Requests complete out of order (the protocol
// allows it); replies never interleave on the stream (one send in flight).
#pragma once
#include <sys/socket.h>
#include <sys/uio.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>
#include <vector>

#include "daemon/frontends/nbd_handshake.h"
#include "daemon/frontends/nbd_share.h"
#include "daemon/frontends/zero_fill.h"
#include "engine/block_target.h"
#include "engine/reactor.h"

namespace gpuraid {

class NbdConnection {
 public:
  static constexpr uint32_t kMaxInflight = 128;
  // Writes this much larger than the maximum block are read and dropped with
  // an error reply; beyond it the stream cannot be trusted and is closed.
  static constexpr uint64_t kMaxDiscardBytes = 64ull << 20;

  // max_inflight_bytes: data buffers (reads and writes) this connection may
  // hold from the reactor's arena at once, so that one greedy client cannot
  // use up the arena its reactor's other clients need. A request beyond it,
  // or beyond the connection's fair share of the reactor's NBD budget
  // (NbdShare: half the arena among the reactor's connections), waits,
  // unparsed, and the socket is not read until replies free bytes (one
  // request is always let in, whatever its size).
  NbdConnection(int fd, Reactor& r, BlockTarget* t, const NbdExportInfo& ex, uint64_t max_inflight_bytes,
                std::function<void()> on_closed);
  ~NbdConnection();
  void start();               // any thread: begins serving on the reactor
  void kill();                // any thread: shuts the socket down; the reactor then closes
  // Any thread: a clean end from the server's side, as far as NBD allows:
  // requests in flight are served and answered, requests that arrive
  // meanwhile are answered NBD_ESHUTDOWN (the protocol's "the server is
  // shutting down, disconnect"), and once the client has been told so and
  // nothing is in flight the connection closes (or when the client closes).
  void drain();
  // Any thread, after drain(): closes the connection if its client is idle
  // (nothing in flight or half received, never told).
  void close_if_idle();
  bool closed() const { return closed_.load(std::memory_order_acquire); }
  // Any thread, once closed(): frees c on its reactor, after every task
  // queued for it there (so never under its own close callback, and never
  // with a drain or idle check of it still queued).
  static void dispose(std::unique_ptr<NbdConnection> c);

 private:
  struct Req {
    NbdConnection* conn = nullptr;
    uint16_t type = 0, flags = 0;
    uint64_t handle = 0, offset = 0;
    uint32_t len = 0;
    uint8_t* buf = nullptr;     // from the reactor's pool (reads, writes)
    uint32_t error = 0;         // NBD error for the reply
    uint8_t reply[16];
    IoRequest io;
    ZeroFill zero;
    Req* next = nullptr;
  };
  enum class RxState { Header, Payload, Discard };
  struct Hook {               // a ring completion that knows its connection
    Completion c;
    NbdConnection* self;
  };

  static void on_start(Task* t);
  static void on_drain(Task* t);
  static void on_close_if_idle(Task* t);
  static void on_dispose(Task* t);
  static void on_buffers(Task* t);
  static void on_send_retry(Task* t);
  static void on_recv_cqe(Completion* c, const io_uring_cqe* cqe);
  static void on_send_cqe(Completion* c, const io_uring_cqe* cqe);
  static void on_io_done(IoRequest* io);
  static void on_zero_done(void* ctx, int result);

  void pump();
  bool parse_header();        // false: stop parsing for now (or closing)
  void arm_recv();
  uint32_t check(uint64_t off, uint32_t len, bool write) const;
  void submit_io(Req* q, IoRequest::Op op);
  void complete(Req* q, int result);
  void reply(Req* q, uint32_t error);
  void kick_send();
  void release(Req* q);
  void begin_close(const char* why);
  void maybe_finish();

  const int fd_;
  std::mutex fd_mu_;          // kill() vs close
  bool fd_open_ = true;
  Reactor& r_;
  BlockTarget* t_;
  NbdExportInfo ex_;
  std::function<void()> on_closed_;
  std::atomic<bool> closed_{false};

  std::vector<Req> reqs_;
  Req* free_ = nullptr;
  uint32_t inflight_ = 0;
  const uint64_t max_inflight_bytes_;
  uint64_t inflight_bytes_ = 0;   // buffer bytes held by requests in flight
  bool bytes_wait_ = false;       // the next request waits for inflight_bytes_ to drop
  NbdShare& share_;               // the reactor's budget, shared with its other connections
  bool joined_ = false;           // counted in share_ (from start until closed)

  // Receive side.
  Hook recv_hook_;
  std::vector<uint8_t> rbuf_;
  size_t rhead_ = 0, rtail_ = 0;  // unparsed bytes are rbuf_[rhead_, rtail_)
  bool recv_pending_ = false, recv_direct_ = false;
  bool large_writes_ = false;     // the last request was a large write: receive the next header alone
  RxState rx_ = RxState::Header;
  Req* cur_ = nullptr;            // the write whose payload is arriving
  uint32_t have_ = 0;
  uint64_t discard_left_ = 0;
  bool disconnecting_ = false, closing_ = false, buf_wait_ = false;
  bool draining_ = false;     // drain(): new requests get NBD_ESHUTDOWN
  Task start_task_, buf_task_, send_retry_task_, drain_task_, idle_task_, dispose_task_;

  // Send side: a FIFO of ready replies; one sendmsg in flight.
  Hook send_hook_;
  Req* sendq_head_ = nullptr;
  Req* sendq_tail_ = nullptr;
  std::vector<Req*> batch_;
  std::vector<iovec> iov_;
  size_t iov_at_ = 0;
  msghdr msg_{};
  bool send_pending_ = false, send_retry_queued_ = false;
};

}  // namespace gpuraid
