#!/usr/bin/env python3
"""A minimal NBD client for what real clients will not do: misbehave.

  nbd_client.py trim SOCKET OFFSET LENGTH   one NBD_CMD_TRIM, expects success
  nbd_client.py bad-clients SOCKET          protocol abuse; asserts clean errors
                                            and that the server keeps serving
  nbd_client.py idle SOCKET SECONDS         one read, then idle: expects the server
                                            to close within SECONDS (an unexport)
  nbd_client.py tls-required ADDR           a plain client of an export that requires
                                            TLS: NBD_REP_ERR_TLS_REQD, then closed
  nbd_client.py limits ADDR MAX TIMEOUT_S   connection limit and handshake timeout:
                                            offenders dropped, others served
  nbd_client.py fuzz-tx ADDR CASES SEED     transmission-phase fuzzing: pipelined random
                                            requests; every reply well-formed, data kept
  nbd_client.py greedy ADDR N WAIT_S [C]    N 1 MiB reads sent and not read back (by each of
                                            C clients, default 1) while another client's reads
                                            (4 KiB to 1 MiB) must each answer within WAIT_S;
                                            then every reply checked

SOCKET is a Unix socket path; ADDR is that, or tcp:HOST:PORT.
"""
import os
import socket
import struct
import sys

INIT_MAGIC, OPT_MAGIC, REP_MAGIC = 0x4E42444D41474943, 0x49484156454F5054, 0x3E889045565A9
REQ_MAGIC, SIMPLE_MAGIC = 0x25609513, 0x67446698
OPT_EXPORT_NAME, OPT_ABORT, OPT_GO, OPT_LIST, OPT_STARTTLS, OPT_STRUCTURED = 1, 2, 7, 3, 5, 8
REP_ACK, REP_INFO, REP_ERR_UNSUP, REP_ERR_UNKNOWN = 1, 3, 0x80000001, 0x80000006
REP_ERR_INVALID, REP_ERR_TLS_REQD = 0x80000003, 0x80000005
CMD_READ, CMD_WRITE, CMD_DISC, CMD_FLUSH, CMD_TRIM, CMD_ZEROES = 0, 1, 2, 3, 4, 6
EINVAL, ENOSPC, EOVERFLOW = 22, 28, 75


def recv_exact(s, n):
    b = b""
    while len(b) < n:
        c = s.recv(n - len(b))
        if not c:
            raise EOFError("server closed after %d of %d bytes" % (len(b), n))
        b += c
    return b


def dial(path):
    if path.startswith("tcp:"):
        host, port = path[4:].rsplit(":", 1)
        s = socket.create_connection((host, int(port)), timeout=20)
    else:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(20)
        s.connect(path)
    return s


def greet(s):
    magic, opt, flags = struct.unpack(">QQH", recv_exact(s, 18))
    assert magic == INIT_MAGIC and opt == OPT_MAGIC and flags & 1, (hex(magic), hex(opt), flags)
    s.sendall(struct.pack(">I", 3))  # fixed newstyle, no zeroes


def option(s, opt, data=b""):
    s.sendall(struct.pack(">QII", OPT_MAGIC, opt, len(data)) + data)


def opt_reply(s):
    magic, opt, typ, ln = struct.unpack(">QIII", recv_exact(s, 20))
    assert magic == REP_MAGIC, hex(magic)
    return opt, typ, recv_exact(s, ln)


def go(s, name=b"", infos=(3,)):
    option(s, OPT_GO, struct.pack(">I", len(name)) + name + struct.pack(">H", len(infos)) +
           b"".join(struct.pack(">H", i) for i in infos))
    size = None
    while True:
        _, typ, data = opt_reply(s)
        if typ == REP_INFO and struct.unpack(">H", data[:2])[0] == 0:
            size = struct.unpack(">Q", data[2:10])[0]
        elif typ == REP_ACK:
            return size
        elif typ & 0x80000000:
            return -typ


def connect(path):
    s = dial(path)
    greet(s)
    size = go(s)
    assert size and size > 0, size
    return s, size


def request(s, typ, off, ln, payload=b"", flags=0, handle=7):
    s.sendall(struct.pack(">IHHQQI", REQ_MAGIC, flags, typ, handle, off, ln) + payload)
    magic, err, h = struct.unpack(">IIQ", recv_exact(s, 16))
    assert magic == SIMPLE_MAGIC and h == handle, (hex(magic), h)
    data = recv_exact(s, ln) if typ == CMD_READ and err == 0 else b""
    return err, data


def closed_by_server(s):
    try:
        return s.recv(1) == b""
    except (ConnectionResetError, BrokenPipeError):
        return True


def bad_clients(path):
    # Good data to check later.
    s, size = connect(path)
    pattern = os.urandom(1 << 20)
    assert request(s, CMD_WRITE, 0, len(pattern), pattern)[0] == 0

    # Garbage instead of client flags, and garbage instead of an option.
    g = dial(path); recv_exact(g, 18); g.sendall(os.urandom(64)); assert closed_by_server(g), "garbage flags"
    g = dial(path); greet(g); g.sendall(b"GET / HTTP/1.1\r\n\r\n"); assert closed_by_server(g), "garbage option"
    # An absurd option length.
    g = dial(path); greet(g); g.sendall(struct.pack(">QII", OPT_MAGIC, OPT_GO, 1 << 30)); assert closed_by_server(g)
    # Unknown option and unknown export: error replies, the handshake goes on.
    g = dial(path); greet(g)
    option(g, 999, b"xyz"); assert opt_reply(g)[1] == REP_ERR_UNSUP
    option(g, OPT_STRUCTURED); assert opt_reply(g)[1] == REP_ERR_UNSUP
    assert go(g, b"no-such-export") == -REP_ERR_UNKNOWN
    assert go(g, b"vd0") > 0
    # Bad requests in transmission: clean errors, the connection stays usable.
    assert request(g, CMD_READ, 1, 4096)[0] == EINVAL, "misaligned read"
    assert request(g, CMD_READ, 0, 0)[0] == EINVAL, "empty read"
    assert request(g, CMD_READ, size, 4096)[0] == EINVAL, "read past the end"
    assert request(g, CMD_WRITE, size, 4096, b"\0" * 4096)[0] == ENOSPC, "write past the end"
    assert request(g, CMD_READ, 0, 2 << 20)[0] == EOVERFLOW, "oversized read"
    assert request(g, CMD_WRITE, 0, 2 << 20, b"\1" * (2 << 20))[0] == EOVERFLOW, "oversized write"
    assert request(g, 99, 0, 4096)[0] == EINVAL, "unknown command"
    assert request(g, CMD_ZEROES, 4095, 4096)[0] == EINVAL, "misaligned write-zeroes"
    err, data = request(g, CMD_READ, 0, len(pattern))
    assert err == 0 and data == pattern, "data changed by refused requests"
    # A write far beyond any limit: the stream cannot be trusted, the server closes.
    g.sendall(struct.pack(">IHHQQI", REQ_MAGIC, 0, CMD_WRITE, 1, 0, 1 << 30))
    assert closed_by_server(g), "huge write"
    # Bad request magic.
    g, _ = connect(path); g.sendall(b"\xde\xad" * 14); assert closed_by_server(g), "bad request magic"
    # Disconnect in the middle of a write payload: nothing of it is written.
    g, _ = connect(path)
    g.sendall(struct.pack(">IHHQQI", REQ_MAGIC, 0, CMD_WRITE, 1, 0, 65536) + b"\xff" * 10000)
    g.close()
    # Many clients that stall mid-handshake do not stop others.
    stalled = []
    for _ in range(20):
        x = dial(path); recv_exact(x, 18); stalled.append(x)
    t, _ = connect(path)
    err, data = request(t, CMD_READ, 0, len(pattern))
    assert err == 0 and data == pattern, "data changed by a disconnect mid-write"
    assert request(t, CMD_FLUSH, 0, 0)[0] == 0
    t.sendall(struct.pack(">IHHQQI", REQ_MAGIC, 0, CMD_DISC, 9, 0, 0))
    assert closed_by_server(t), "NBD_CMD_DISC"
    for x in stalled:
        x.close()
    s.close()
    print("bad clients: every abuse got a clean error; data intact")


def tls_required(addr):
    # Every option but STARTTLS and ABORT: NBD_REP_ERR_TLS_REQD; the
    # handshake goes on. A malformed STARTTLS: NBD_REP_ERR_INVALID.
    g = dial(addr); greet(g)
    option(g, OPT_LIST); assert opt_reply(g)[1] == REP_ERR_TLS_REQD, "LIST before STARTTLS"
    assert go(g) == -REP_ERR_TLS_REQD, "GO before STARTTLS"
    option(g, OPT_STRUCTURED); assert opt_reply(g)[1] == REP_ERR_TLS_REQD
    option(g, OPT_STARTTLS, b"x"); assert opt_reply(g)[1] == REP_ERR_INVALID, "STARTTLS with data"
    option(g, OPT_ABORT); assert opt_reply(g)[1] == REP_ACK
    g.close()
    # NBD_OPT_EXPORT_NAME has no error reply: the server closes.
    g = dial(addr); greet(g)
    option(g, OPT_EXPORT_NAME, b"v"); assert closed_by_server(g), "EXPORT_NAME without TLS"
    # STARTTLS acknowledged, then garbage instead of a TLS ClientHello: closed.
    g = dial(addr); greet(g)
    option(g, OPT_STARTTLS); assert opt_reply(g)[1] == REP_ACK
    g.sendall(b"\0" * 64); assert closed_by_server(g), "garbage TLS handshake"
    print("tls-required: TLS_REQD for options before STARTTLS, EXPORT_NAME closed, bad TLS closed")


def limits(addr, max_conns, timeout_s):
    import time
    # One served client, the rest of the limit stalled mid-handshake.
    t, size = connect(addr)
    stalled = []
    for _ in range(max_conns - 2):
        x = dial(addr); recv_exact(x, 18); stalled.append(x)
    trickle = dial(addr); greet(trickle)
    # One more: closed at once, without a greeting.
    x = dial(addr); x.settimeout(5)
    assert closed_by_server(x), "a connection beyond the limit was served"
    assert request(t, CMD_READ, 0, 4096)[0] == 0, "the served client suffers from the refused one"
    # A client that trickles an option in, a byte at a time, is dropped at the
    # handshake timeout all the same.
    start = time.monotonic()
    header = struct.pack(">QII", OPT_MAGIC, OPT_GO, 1 << 15)
    dropped = False
    for i in range(int((timeout_s + 5) / 0.2)):
        try:
            trickle.sendall(header[i % len(header):i % len(header) + 1])
        except (BrokenPipeError, ConnectionResetError):
            dropped = True
            break
        time.sleep(0.2)
    took = time.monotonic() - start
    assert dropped, "a trickling client was never dropped"
    assert took < timeout_s + 3, "dropped after %.1f s (timeout %.1f s)" % (took, timeout_s)
    for x in stalled:
        x.settimeout(5)
        assert closed_by_server(x), "a stalled handshake outlived the timeout"
    assert request(t, CMD_READ, 0, 4096)[0] == 0, "the served client was dropped too"
    # Nothing leaked: the limit's worth of clients can connect again.
    again = [connect(addr)[0] for _ in range(max_conns - 1)]
    for g in again:
        assert request(g, CMD_READ, 0, 4096)[0] == 0
    for g in again + [t]:
        g.close()
    print("limits: connection %d refused, trickler dropped after %.1f s, stalled handshakes dropped, "
          "others served" % (max_conns + 1, took))


def greedy(addr, n, wait_s, conns=1):
    import time
    mib = 1 << 20
    polite, size = connect(addr)
    pattern = os.urandom(size)
    for off in range(0, size, mib):
        assert request(polite, CMD_WRITE, off, mib, pattern[off:off + mib])[0] == 0
    # N large reads in flight from each of `conns` clients that read none of
    # their replies: the server must keep them within each connection's
    # in-flight bytes, and all of them within their fair share of the
    # reactor's arena, and leave the rest unread (not fail them), so that
    # the arena stays open to the polite client on the same reactor.
    greedies = [connect(addr)[0] for _ in range(conns)]
    blocks = size // mib
    for g in greedies:
        g.sendall(b"".join(struct.pack(">IHHQQI", REQ_MAGIC, 0, CMD_READ, h, (h % blocks) * mib, mib)
                           for h in range(n)))
    time.sleep(1)  # let the server take in what it will
    polite.settimeout(wait_s)
    start = time.monotonic()
    # Every buffer size class (4 KiB to 1 MiB): a class the greedy client
    # used up, or one with no free block left, would stall.
    sizes = [4096 << (i % 9) for i in range(36)]
    for i, ln in enumerate(sizes):
        off = (i * 7919 * 4096) % (size - ln + 4096) // ln * ln
        try:
            err, data = request(polite, CMD_READ, off, ln, handle=1000 + i)
        except socket.timeout:
            sys.exit("FAIL: a %d KiB read at %d got no reply in %.0f s while %d other client(s) on the same "
                     "reactor had %d MiB of reads in flight each" % (ln >> 10, off, wait_s, conns, n))
        assert err == 0 and data == pattern[off:off + ln], "read %d at %d: error %d or wrong data" % (i, off, err)
    took = time.monotonic() - start
    # Every greedy request is answered, none failed, data right.
    for g in greedies:
        g.settimeout(60)
        seen = set()
        for _ in range(n):
            magic, err, h = struct.unpack(">IIQ", recv_exact(g, 16))
            assert magic == SIMPLE_MAGIC and 0 <= h < n and h not in seen, (hex(magic), h)
            assert err == 0, "greedy read %d failed: error %d" % (h, err)
            off = (h % blocks) * mib
            assert recv_exact(g, mib) == pattern[off:off + mib], "greedy read %d: wrong data" % h
            seen.add(h)
        g.close()
    polite.close()
    print("greedy: %d reads of 4 KiB to 1 MiB beside %d client(s) with %d MiB of reads in flight each took %.2f s; "
          "all %d large reads answered with the right data" % (len(sizes), conns, n, took, conns * n))


def fuzz_tx(addr, cases, seed):
    # Structure-aware: mostly valid headers with random commands, flags,
    # offsets and lengths (aligned or not, in range or not), pipelined 16 deep;
    # now and then a stream the server must close (bad magic, a write of more
    # than 64 MiB). The first MiB holds a pattern that nothing may change
    # (mutating requests aim past it); every reply must carry a handle that
    # was sent, and a successful read its data.
    import random
    rnd = random.Random(seed)
    s, size = connect(addr)
    mib = 1 << 20
    pattern = bytes(rnd.getrandbits(8) for _ in range(4096)) * 256
    assert request(s, CMD_WRITE, 0, mib, pattern)[0] == 0
    def pick_off(mutating):
        c = rnd.randrange(6)
        if c == 0: return rnd.getrandbits(64)
        if c == 1: return size - 4096 * rnd.randrange(0, 4)
        base = mib if mutating else 0
        return base + 4096 * rnd.randrange(0, (size - base) // 4096) + (rnd.randrange(4096) if c == 2 else 0)
    def pick_len():
        c = rnd.randrange(6)
        if c == 0: return 0
        if c == 1: return rnd.randrange(1, 3 * mib)
        return 4096 * rnd.randrange(1, 64)
    sent = done = closes = errors = 0
    while sent < cases:
        out, pending = [], {}
        for _ in range(16):
            # Any type but NBD_CMD_DISC, which ends the session by the protocol
            # (the server closes once the replies before it are sent).
            typ = rnd.choice([CMD_READ, CMD_READ, CMD_WRITE, CMD_WRITE, CMD_FLUSH, CMD_TRIM, CMD_ZEROES, 5, 7,
                              rnd.randrange(3, 65536)])
            flags = rnd.getrandbits(16) if rnd.randrange(8) == 0 else rnd.choice([0, 1])
            off, ln = pick_off(typ != CMD_READ), pick_len()
            if typ == CMD_WRITE and off < mib:
                off = mib  # the pattern stays
            h = sent
            payload = bytes(ln) if typ == CMD_WRITE else b""
            out.append(struct.pack(">IHHQQI", REQ_MAGIC, flags, typ, h, off, ln) + payload)
            pending[h] = (typ, ln)
            sent += 1
        s.sendall(b"".join(out))
        while pending:
            magic, err, h = struct.unpack(">IIQ", recv_exact(s, 16))
            assert magic == SIMPLE_MAGIC, "bad reply magic %x after %d requests" % (magic, done)
            assert h in pending, "reply to handle %d that was not pending" % h
            typ, ln = pending.pop(h)
            if typ == CMD_READ and err == 0:
                recv_exact(s, ln)
            errors += err != 0
            done += 1
        if rnd.randrange(200) == 0:
            # Once the replies are in (a server may drop unsent replies when it
            # closes a broken stream).
            s.sendall(rnd.choice([b"\xde\xad" * 14,
                                  struct.pack(">IHHQQI", REQ_MAGIC, 0, CMD_WRITE, 1 << 40, mib, 1 << 30)]))
            s.settimeout(10)
            assert closed_by_server(s), "a broken stream was not closed"
            closes += 1
            s, _ = connect(addr)
    err, data = request(s, CMD_READ, 0, mib)
    assert err == 0 and data == pattern, "the first MiB changed"
    s.close()
    print("fuzz-tx: %d requests (seed %d), %d answered with an error, %d broken streams closed; data intact"
          % (sent, seed, errors, closes))


def main():
    if sys.argv[1] == "trim":
        s, _ = connect(sys.argv[2])
        err, _ = request(s, CMD_TRIM, int(sys.argv[3]), int(sys.argv[4]))
        assert err == 0, err
        assert request(s, CMD_FLUSH, 0, 0)[0] == 0
    elif sys.argv[1] == "tls-required":
        tls_required(sys.argv[2])
    elif sys.argv[1] == "fuzz-tx":
        fuzz_tx(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
    elif sys.argv[1] == "greedy":
        greedy(sys.argv[2], int(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5]) if len(sys.argv) > 5 else 1)
    elif sys.argv[1] == "limits":
        limits(sys.argv[2], int(sys.argv[3]), float(sys.argv[4]))
    elif sys.argv[1] == "bad-clients":
        bad_clients(sys.argv[2])
    elif sys.argv[1] == "idle":
        s, _ = connect(sys.argv[2])
        assert request(s, CMD_READ, 0, 4096)[0] == 0
        print("idle client connected", flush=True)
        s.settimeout(float(sys.argv[3]))
        assert closed_by_server(s), "the server sent something unasked"
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
