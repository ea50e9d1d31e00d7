#include "engine/parity/job_check.h"

#include <climits>

namespace gpuraid {
namespace {

bool all_set(uint8_t* const* v, uint32_t n) {
  for (uint32_t i = 0; i < n; i++)
    if (!v[i]) return false;
  return true;
}

// Indices below `limit`, no two the same; `seen` collects them.
bool distinct_below(const uint8_t* idx, uint32_t n, uint32_t limit, uint64_t* seen) {
  for (uint32_t i = 0; i < n; i++) {
    if (idx[i] >= limit || (*seen >> idx[i] & 1)) return false;
    *seen |= 1ull << idx[i];
  }
  return true;
}

const char* code_invalid(const Codec* c) {
  if (!c || c->kind() == CodeKind::None) return "job has no parity code";
  if (c->k() == 0 || c->m() == 0 || c->k() + c->m() > kMaxMembers) return "k or m out of range";
  if (c->kind() == CodeKind::Xor && c->m() != 1) return "an XOR code has one parity row";
  if (c->kind() == CodeKind::PQ && c->m() != 2) return "a P/Q code has two parity rows";
  return nullptr;
}

}  // namespace

const char* parity_job_invalid(const ParityJob& j) {
  if (const char* why = code_invalid(j.codec)) return why;
  const uint32_t k = j.codec->k(), m = j.codec->m();
  if (j.len == 0) return "len is 0";
  if (j.len > uint32_t(INT_MAX)) return "len over INT_MAX";  // ISA-L takes an int
  uint64_t seen = 0;
  switch (j.op) {
    case ParityOp::Encode:
      if (!all_set(j.src, k) || !all_set(j.dst, m)) return "null buffer";
      return nullptr;
    case ParityOp::Verify:
      if (!all_set(j.src, k + m)) return "null buffer";
      return nullptr;
    case ParityOp::Update:
      if (j.nsrc > k) return "more changed columns than data strips";
      if (!distinct_below(j.src_idx, j.nsrc, k, &seen)) return "changed column out of range or repeated";
      if (!all_set(j.src, j.nsrc) || !all_set(j.src2, j.nsrc) || !all_set(j.dst, m)) return "null buffer";
      return nullptr;
    case ParityOp::Recover:
      if (j.nsrc != k) return "recover reads exactly k rows";
      if (j.ndst == 0 || j.ndst > m) return "recover rebuilds 1..m rows";
      if (!distinct_below(j.src_idx, k, k + m, &seen)) return "survivor row out of range or repeated";
      if (!distinct_below(j.dst_idx, j.ndst, k + m, &seen))
        return "erased row out of range, repeated or a survivor";
      if (!all_set(j.src, k) || !all_set(j.dst, j.ndst)) return "null buffer";
      return nullptr;
  }
  return "unknown operation";
}

void fail_parity_job(ParityJob* j, int err) {
  j->status = err;
  if (j->op == ParityOp::Verify) {
    const uint32_t m = j->codec ? j->codec->m() : 0;
    j->mismatch_rows = m == 0 || m >= 32 ? ~0u : (1u << m) - 1;
  }
}

}  // namespace gpuraid
