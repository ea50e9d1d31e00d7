// The --gpu-* options of gpuraidd and gpuraid-bench (AcceleratorSettings,
// parity_backend.h), in one place: add_accelerator_options() registers them
// with a CLI11 app (a template, so that the engine needs no CLI11), and
// AcceleratorWords::settings() checks and converts what was given.
#pragma once
#include <string>

#include "engine/parity/parity_backend.h"

namespace gpuraid {

struct AcceleratorWords {
  std::string completion = "poll";  // poll | event
  std::string route = "auto";       // auto | off | a size
  std::string priority = "low";     // low | normal
  double max_gbps = 0;
  uint32_t timeout_ms = AcceleratorSettings{}.timeout_ms;
  uint32_t max_blocks = 0;

  // false (*err) on a bad word or value.
  bool settings(AcceleratorSettings* out, std::string* err) const;
};

template <class App>
void add_accelerator_options(App& app, AcceleratorWords* w) {
  app.add_option("--gpu-completion", w->completion,
                 "how a GPU batch's end is noticed: poll (the reactor reads a word the GPU writes) or event "
                 "(a CUDA host callback writes an eventfd)")
      ->capture_default_str();
  app.add_option("--gpu-route", w->route,
                 "which parity batches the CPU takes instead of the GPU: auto (those it computes in less time "
                 "than a launch costs, measured), off, or a size (batches under it)")
      ->capture_default_str();
  app.add_option("--gpu-max-gbps", w->max_gbps,
                 "cap on the GPU's share, GB/s read plus written (what is beyond it runs on the CPU; 0: none)")
      ->capture_default_str();
  app.add_option("--gpu-timeout-ms", w->timeout_ms,
                 "a GPU batch not finished by then is given up: its jobs run on the CPU and the GPU is paused")
      ->capture_default_str();
  app.add_option("--gpu-priority", w->priority, "GPU stream priority of parity work: low or normal")
      ->capture_default_str();
  app.add_option("--gpu-max-blocks", w->max_blocks, "grid cap of parity kernels (a share of the SMs; 0: all)")
      ->capture_default_str();
}

}  // namespace gpuraid
