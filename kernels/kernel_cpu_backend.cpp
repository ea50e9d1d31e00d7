// The host-shim executor: runs each batch synchronously at launch, through
// the same steps as one of the CUDA paths: zero-copy (Update outputs in
// scratch, the batch kernel, a commit launch) or staged (copy in, kernel on
// the copies, copy out).
#include "kernels/kernel_cpu_backend.h"

#include <cstring>
#include <vector>

#include "kernels/shim_launch.h"

namespace gpuraid {
namespace {

using kern::HostBatch;

struct alignas(16) Word16 {
  uint64_t v[2];
};

class ShimExecutor final : public kern::Executor {
 public:
  explicit ShimExecutor(const KernelCpuOptions& o) : opts_(o) {}
  const char* name() const override { return "host-shim"; }
  uint32_t slots() const override { return 1; }

  bool launch(uint32_t, HostBatch& b, std::string* err) override {
    const int n = launches_++;
    if (n == opts_.fail_launch_at) {
      *err = "injected launch failure";
      return false;
    }
    failed_ = n == opts_.fail_after_kernel_at;
    b.mismatch.assign(b.nverify, 0);
    if (opts_.staged)
      run_staged(b);
    else
      run_zero_copy(b);
    wake();
    return true;
  }

  int query(uint32_t, HostBatch&, std::string* err) override {
    if (!failed_) return 1;
    *err = "injected fault after the kernel ran";
    return -1;
  }

 private:
  // Buffers in place; Update outputs to scratch, then a commit launch.
  void run_zero_copy(HostBatch& b) {
    placed_ = b.ptrs;
    scratch_.assign((kern::update_scratch_bytes(b) + 15) / 16, Word16{});
    kern::place_update_outputs(b, reinterpret_cast<uintptr_t>(scratch_.data()), placed_.data());
    run(b, placed_.data(), b.mismatch.data());
    if (!failed_ && !scratch_.empty()) {
      kern::build_commit(b, placed_.data(), &commit_);
      run(commit_, commit_.ptrs.data(), nullptr);
    }
  }

  // Copies in, kernel on the copies, copies out: the CUDA staged path.
  void run_staged(HostBatch& b) {
    kern::plan_staging(b, &plan_);
    scratch_.assign((plan_.bytes + 15) / 16, Word16{});
    const uintptr_t base = reinterpret_cast<uintptr_t>(scratch_.data());
    placed_.resize(b.ptrs.size());
    for (size_t i = 0; i < b.ptrs.size(); i++) placed_[i] = base + plan_.offset[i];
    auto host = [&](size_t i) { return reinterpret_cast<uint8_t*>(b.ptrs[i]); };
    auto dev = [&](size_t i) { return reinterpret_cast<uint8_t*>(placed_[i]); };
    for (size_t i : plan_.copy_in) memcpy(dev(i), host(i), b.ptr_len[i]);
    run(b, placed_.data(), b.mismatch.data());
    if (!failed_)
      for (size_t i : plan_.copy_out) memcpy(host(i), dev(i), b.ptr_len[i]);
  }

  void run(const HostBatch& b, const uint64_t* ptrs, uint32_t* mismatch) {
    const kern::BlobLayout l = kern::blob_layout(b);
    blob_.assign(l.total / sizeof(uint64_t) + 1, 0);
    kern::write_blob(b, ptrs, reinterpret_cast<uint8_t*>(blob_.data()));
    const kern::KBatch kb =
        kern::blob_kbatch(b, l, reinterpret_cast<uintptr_t>(blob_.data()), mismatch);
    kern::shim_run_parity_kernel(kb, kern::grid_blocks(b.ntiles, opts_.max_blocks));
  }

  KernelCpuOptions opts_;
  int launches_ = 0;
  bool failed_ = false;
  std::vector<uint64_t> placed_, blob_;
  std::vector<Word16> scratch_;  // Update outputs until commit, or the staging arena
  HostBatch commit_;
  kern::StagingPlan plan_;
};

}  // namespace

std::unique_ptr<kern::BatchingBackend> make_kernel_cpu_backend(const KernelCpuOptions& opts) {
  return std::make_unique<kern::BatchingBackend>("kernel-cpu", std::make_unique<ShimExecutor>(opts),
                                                 opts.batch);
}

std::unique_ptr<ParityBackend> make_kernel_cpu_backend() {
  return make_kernel_cpu_backend(KernelCpuOptions{});
}

}  // namespace gpuraid
