// The scalar reference backend: every operation written as the plain sum
// over GF(2^8) that defines it, byte by byte with gf::mul. Slow on purpose;
// tests compare ISA-L and the CUDA kernels against it. Byte loops take any
// alignment and length; jobs breaking parity_backend.h's rules fail -EINVAL.
#include <cerrno>
#include <cstring>
#include <vector>

#include "engine/gf256.h"
#include "engine/parity/job_check.h"
#include "engine/parity/parity_backend.h"

namespace gpuraid {
namespace {

class ReferenceBackend final : public ParityBackend {
 public:
  const char* name() const override { return "reference"; }
  void submit(ParityJob* const* jobs, size_t n) override {
    for (size_t i = 0; i < n; i++) {
      run(jobs[i]);
      jobs[i]->done(jobs[i]);
    }
  }

 private:
  static void encode_into(const Codec& c, uint8_t* const* data, uint8_t* const* out, uint32_t len) {
    for (uint32_t r = 0; r < c.m(); r++)
      for (uint32_t b = 0; b < len; b++) {
        uint8_t s = 0;
        for (uint32_t i = 0; i < c.k(); i++) s ^= gf::mul(c.coeff(r, i), data[i][b]);
        out[r][b] = s;
      }
  }

  void run(ParityJob* j) {
    j->status = 0;
    if (parity_job_invalid(*j)) return fail_parity_job(j, -EINVAL);
    const Codec& c = *j->codec;
    switch (j->op) {
      case ParityOp::Encode: encode_into(c, j->src, j->dst, j->len); break;
      case ParityOp::Update:
        for (uint32_t i = 0; i < j->nsrc; i++)
          for (uint32_t r = 0; r < c.m(); r++)
            for (uint32_t b = 0; b < j->len; b++)
              j->dst[r][b] ^= gf::mul(c.coeff(r, j->src_idx[i]), j->src[i][b] ^ j->src2[i][b]);
        break;
      case ParityOp::Recover: {
        std::vector<uint8_t> coef(size_t(j->ndst) * c.k());
        if (!c.decode_coeffs(j->src_idx, j->dst_idx, j->ndst, coef.data())) {
          fail_parity_job(j, -EINVAL);
          break;
        }
        for (uint32_t e = 0; e < j->ndst; e++)
          for (uint32_t b = 0; b < j->len; b++) {
            uint8_t s = 0;
            for (uint32_t i = 0; i < c.k(); i++) s ^= gf::mul(coef[size_t(e) * c.k() + i], j->src[i][b]);
            j->dst[e][b] = s;
          }
        break;
      }
      case ParityOp::Verify: {
        std::vector<std::vector<uint8_t>> p(c.m(), std::vector<uint8_t>(j->len));
        std::vector<uint8_t*> out(c.m());
        for (uint32_t r = 0; r < c.m(); r++) out[r] = p[r].data();
        encode_into(c, j->src, out.data(), j->len);
        j->mismatch_rows = 0;
        for (uint32_t r = 0; r < c.m(); r++)
          if (memcmp(out[r], j->src[c.k() + r], j->len) != 0) j->mismatch_rows |= 1u << r;
        break;
      }
    }
  }
};

}  // namespace

std::unique_ptr<ParityBackend> make_reference_backend() {
  return std::make_unique<ReferenceBackend>();
}

}  // namespace gpuraid
