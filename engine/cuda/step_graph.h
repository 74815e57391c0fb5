// StepGraph: one decode step of the CUDA backend captured once as a CUDA graph and replayed for
// every later step (cuda_backend.h, DecodeGraph::On). A graph bakes every pointer and argument it
// was captured with, so what changes per step travels through fixed buffers:
//   input()   — pinned host {token id, position}; the graph's first node copies it to the
//               device (8 bytes: device_token(), device_position()), where the embedding reads the token and RoPE and
//               decode attention read the position;
//   logits()  — pinned host [n_vocab] fp32; the graph's last node copies the logits there.
// The host writes input() before a launch and reads logits() after the stream has synchronized.
#pragma once
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

#include "cuda/device_buffer.h"

namespace pfx::cuda {

// What a step reads, as it sits in pinned host memory and on the device.
struct StepInput {
  int32_t token = 0;
  int32_t position = 0;
};

class StepGraph {
 public:
  explicit StepGraph(int64_t n_vocab);
  ~StepGraph();
  StepGraph(const StepGraph&) = delete;  // owns pinned memory and graph handles
  StepGraph& operator=(const StepGraph&) = delete;

  StepInput& input() { return *input_; }
  // The two fields of the device copy of input() (device pointers).
  const int32_t* device_token() const { return device_field(offsetof(StepInput, token)); }
  const int32_t* device_position() const { return device_field(offsetof(StepInput, position)); }
  const float* logits() const { return logits_; }

  bool ready() const { return exec_ != nullptr; }
  // Captures on `stream`: the input copy, then what `enqueue` launches (it must write the step's
  // logits to `device_logits`), then the logits copy; instantiates the graph. Returns "" on
  // success, else why not (the stream is out of capture mode again and the CUDA error cleared;
  // nothing was executed).
  std::string capture(cudaStream_t stream, const float* device_logits, const std::function<void()>& enqueue);
  // Enqueues one replay on `stream` (ready() only).
  void launch(cudaStream_t stream);

 private:
  const int32_t* device_field(size_t offset) const {
    return reinterpret_cast<const int32_t*>(device_input_.as<const char>() + offset);
  }
  const int64_t n_vocab_;
  StepInput* input_ = nullptr;  // pinned host
  float* logits_ = nullptr;     // pinned host [n_vocab]
  DeviceBuffer device_input_;   // one StepInput
  cudaGraphExec_t exec_ = nullptr;
};

}  // namespace pfx::cuda
