#include "bench/parity/cases.h"

namespace gpuraid::parity_bench {

std::string ParityCase::name() const {
  static const char* codes[] = {"xor", "pq", "ec"};
  static const char* ops[] = {"encode", "update", "decode"};
  std::string n = std::string(ops[op]) + "/" + codes[int(code)] + std::to_string(k) + "+" + std::to_string(m);
  return op == Decode ? n + "-lost" + std::to_string(lost) : n;
}

size_t ParityCase::data_in_per_stripe(uint32_t strip) const {
  return size_t(op == Update ? 1 : k) * strip;
}

const std::vector<ParityCase>& parity_cases() {
  using P = ParityCase;
  static const std::vector<ParityCase> cases = [] {
    std::vector<ParityCase> v = {{P::Encode, Code::Xor, 8, 1},    {P::Encode, Code::PQ, 8, 2},
                                 {P::Encode, Code::Cauchy, 8, 2}, {P::Encode, Code::Cauchy, 8, 3},
                                 {P::Encode, Code::Cauchy, 16, 4}, {P::Update, Code::PQ, 8, 2},
                                 {P::Update, Code::Cauchy, 8, 2},
                                 {P::Update, Code::Cauchy, 8, 3}, {P::Update, Code::Cauchy, 16, 4},
                                 {P::Decode, Code::Xor, 8, 1, 1}};
    for (uint32_t lost = 1; lost <= 2; lost++) v.push_back({P::Decode, Code::PQ, 8, 2, lost});
    const uint32_t ec[][2] = {{8, 2}, {8, 3}, {16, 4}};
    for (auto [k, m] : ec)
      for (uint32_t lost = 1; lost <= m; lost++) v.push_back({P::Decode, Code::Cauchy, k, m, lost});
    return v;
  }();
  return cases;
}

const Shape& aligned_shape() {
  static const Shape s{"", 0, 0};
  return s;
}

const std::vector<Shape>& awkward_shapes() {
  static const std::vector<Shape> v = {{"-misaligned", 8, 64}, {"-oddlen", 0, 24}};
  return v;
}

bool uses_raid_gen(const ParityCase& c) {
  // RAID 5 everything; RAID 6 encode (pq_gen) and update (xor_gen makes the delta).
  return c.code == Code::Xor || (c.code == Code::PQ && c.op != ParityCase::Decode);
}

std::shared_ptr<StripeBuffers> buffers_for(const Mode& mode, uint32_t k, uint32_t m) {
  static std::shared_ptr<StripeBuffers> last;
  static std::string key;
  const std::string want = mode.name + "/" + std::to_string(k) + "+" + std::to_string(m);
  if (key != want) {
    last.reset();  // free the old buffers before taking new ones (512M modes)
    last = std::make_shared<StripeBuffers>(mode, k, m);
    key = want;
  }
  return last;
}

void report_rate(benchmark::State& state, size_t bytes_per_iteration) {
  const double bytes = double(bytes_per_iteration) * double(state.iterations());
  state.SetBytesProcessed(int64_t(bytes));
  state.counters["GB/s"] = benchmark::Counter(bytes / 1e9, benchmark::Counter::kIsRate);
}

}  // namespace gpuraid::parity_bench
