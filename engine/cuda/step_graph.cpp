// StepGraph (step_graph.h): capture of one decode step with its pinned input and logits copies,
// and its replay.
#include "cuda/step_graph.h"

#include <exception>
#include <new>

#include "kernels/cuda_check.h"

namespace pfx::cuda {

StepGraph::StepGraph(int64_t n_vocab) : n_vocab_(n_vocab), device_input_(sizeof(StepInput)) {
  void* in = nullptr;
  CUDA_CHECK(cudaHostAlloc(&in, sizeof(StepInput), cudaHostAllocDefault));
  input_ = new (in) StepInput{};
  void* out = nullptr;
  if (const cudaError_t e = cudaHostAlloc(&out, static_cast<size_t>(n_vocab) * sizeof(float), cudaHostAllocDefault);
      e != cudaSuccess) {
    CUDA_CHECK_NOEXCEPT(cudaFreeHost(input_));
    CUDA_CHECK(e);
  }
  logits_ = static_cast<float*>(out);
}

StepGraph::~StepGraph() {
  if (exec_) CUDA_CHECK_NOEXCEPT(cudaGraphExecDestroy(exec_));
  if (logits_) CUDA_CHECK_NOEXCEPT(cudaFreeHost(logits_));
  if (input_) CUDA_CHECK_NOEXCEPT(cudaFreeHost(input_));
}

std::string StepGraph::capture(cudaStream_t stream, const float* device_logits, const std::function<void()>& enqueue) {
  // Thread-local mode: an unsafe call from this thread inside the capture (a synchronize, a
  // cudaMalloc, a wait on an event recorded outside it) fails the capture instead of running.
  CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  std::string why;
  try {
    CUDA_CHECK(cudaMemcpyAsync(device_input_.as(), input_, sizeof(StepInput), cudaMemcpyHostToDevice, stream));
    enqueue();
    CUDA_CHECK(cudaMemcpyAsync(logits_, device_logits, static_cast<size_t>(n_vocab_) * sizeof(float),
                               cudaMemcpyDeviceToHost, stream));
  } catch (const std::exception& e) {
    why = e.what();
  }
  cudaGraph_t graph = nullptr;
  const cudaError_t end = cudaStreamEndCapture(stream, &graph);
  if (why.empty() && end != cudaSuccess) why = std::string("cudaStreamEndCapture: ") + cudaGetErrorString(end);
  if (why.empty()) {
    if (const cudaError_t e = cudaGraphInstantiate(&exec_, graph, 0); e != cudaSuccess) {
      why = std::string("cudaGraphInstantiate: ") + cudaGetErrorString(e);
      exec_ = nullptr;
    } else if (const cudaError_t u = cudaGraphUpload(exec_, stream); u != cudaSuccess) {
      // Uploaded now so that the first replay costs what every later one does.
      why = std::string("cudaGraphUpload: ") + cudaGetErrorString(u);
      CUDA_CHECK_NOEXCEPT(cudaGraphExecDestroy(exec_));
      exec_ = nullptr;
    }
  }
  if (graph) CUDA_CHECK_NOEXCEPT(cudaGraphDestroy(graph));
  if (!why.empty()) (void)cudaGetLastError();  // a failed capture leaves a non-sticky error behind
  return why;
}

void StepGraph::launch(cudaStream_t stream) { CUDA_CHECK(cudaGraphLaunch(exec_, stream)); }

}  // namespace pfx::cuda
