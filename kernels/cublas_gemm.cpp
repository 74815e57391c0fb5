// SequentialGemm (kernels/cublas_gemm.h): one cuBLASLt plan per shape, its algorithm the
// heuristic's first without split-K.
#include "kernels/cublas_gemm.h"

#include <cublasLt.h>

#include <cstdio>

#include "kernels/cuda_check.h"
#include "util/error.h"

namespace pfx::kernels {

namespace {
void check(cublasStatus_t st, const char* what) {
  if (st != CUBLAS_STATUS_SUCCESS) fail("SequentialGemm: ", what, " failed: cuBLAS status ", static_cast<int>(st));
}
}  // namespace

struct SequentialGemm::Plan {
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
  cublasLtMatmulAlgo_t algo{};
  ~Plan() {
    if (c) cublasLtMatrixLayoutDestroy(c);
    if (b) cublasLtMatrixLayoutDestroy(b);
    if (a) cublasLtMatrixLayoutDestroy(a);
    if (desc) cublasLtMatmulDescDestroy(desc);
  }
};

SequentialGemm::SequentialGemm() {
  cublasLtHandle_t h = nullptr;
  check(cublasLtCreate(&h), "cublasLtCreate");
  handle_ = h;
}

SequentialGemm::~SequentialGemm() {
  plans_.clear();
  if (handle_) cublasLtDestroy(static_cast<cublasLtHandle_t>(handle_));
}

const SequentialGemm::Plan& SequentialGemm::plan(int64_t T, int64_t N, int64_t K, bool accumulate, bool f16_out) {
  const Key key{T, N, K, accumulate, f16_out};
  if (auto it = plans_.find(key); it != plans_.end()) return *it->second;
  auto p = std::make_unique<Plan>();
  // Row-major Y[T,N] = X[T,K]·W[N,K]ᵀ is column-major Yᵀ[N,T] = W·Xᵀ: W is a column-major K×N
  // matrix used transposed, X a column-major K×T matrix.
  check(cublasLtMatmulDescCreate(&p->desc, CUBLAS_COMPUTE_32F, CUDA_R_32F), "cublasLtMatmulDescCreate");
  const cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
  check(cublasLtMatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta), "TRANSA");
  check(cublasLtMatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb), "TRANSB");
  check(cublasLtMatrixLayoutCreate(&p->a, CUDA_R_16F, static_cast<uint64_t>(K), static_cast<uint64_t>(N), K), "layout A");
  check(cublasLtMatrixLayoutCreate(&p->b, CUDA_R_16F, static_cast<uint64_t>(K), static_cast<uint64_t>(T), K), "layout B");
  check(cublasLtMatrixLayoutCreate(&p->c, f16_out ? CUDA_R_16F : CUDA_R_32F, static_cast<uint64_t>(N),
                                   static_cast<uint64_t>(T), N),
        "layout C");
  cublasLtMatmulPreference_t pref = nullptr;
  check(cublasLtMatmulPreferenceCreate(&pref), "cublasLtMatmulPreferenceCreate");
  const uint32_t no_reduction = CUBLASLT_REDUCTION_SCHEME_NONE;
  const uint64_t no_workspace = 0;
  check(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK, &no_reduction,
                                             sizeof no_reduction),
        "reduction scheme mask");
  check(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &no_workspace,
                                             sizeof no_workspace),
        "workspace");
  cublasLtMatmulHeuristicResult_t results[8];
  int n = 0;
  const cublasStatus_t st = cublasLtMatmulAlgoGetHeuristic(static_cast<cublasLtHandle_t>(handle_), p->desc, p->a, p->b,
                                                           p->c, p->c, pref, 8, results, &n);
  cublasLtMatmulPreferenceDestroy(pref);
  check(st, "cublasLtMatmulAlgoGetHeuristic");
  bool found = false;
  for (int i = 0; i < n && !found; ++i) {
    uint32_t splits = 1;
    size_t written = 0;
    check(cublasLtMatmulAlgoConfigGetAttribute(&results[i].algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &splits, sizeof splits,
                                               &written),
          "algo split-K");
    if (results[i].state == CUBLAS_STATUS_SUCCESS && splits <= 1) p->algo = results[i].algo, found = true;
  }
  if (!found) {
    // Not seen on the H200 for any shape the engine runs; then the default heuristic (which may
    // split K: the fused path is then no longer bitwise equal here), said once per shape.
    cublasLtMatmulPreference_t any = nullptr;
    check(cublasLtMatmulPreferenceCreate(&any), "cublasLtMatmulPreferenceCreate");
    const cublasStatus_t st2 = cublasLtMatmulAlgoGetHeuristic(static_cast<cublasLtHandle_t>(handle_), p->desc, p->a,
                                                              p->b, p->c, p->c, any, 1, results, &n);
    cublasLtMatmulPreferenceDestroy(any);
    check(st2, "cublasLtMatmulAlgoGetHeuristic (any algorithm)");
    if (n < 1) fail("SequentialGemm: cuBLASLt has no algorithm for T=", T, " N=", N, " K=", K);
    p->algo = results[0].algo;
    std::fprintf(stderr, "SequentialGemm: no cuBLASLt algorithm without split-K for T=%lld N=%lld K=%lld; the default one may split K\n",
                 static_cast<long long>(T), static_cast<long long>(N), static_cast<long long>(K));
  }
  return *plans_.emplace(key, std::move(p)).first->second;
}

void SequentialGemm::run(const uint16_t* w16, const uint16_t* x16, void* y, int64_t T, int64_t N, int64_t K,
                         bool accumulate, bool f16_out, cudaStream_t stream) {
  const Plan& p = plan(T, N, K, accumulate, f16_out);
  const float alpha = 1.0f, beta = accumulate ? 1.0f : 0.0f;
  check(cublasLtMatmul(static_cast<cublasLtHandle_t>(handle_), p.desc, &alpha, w16, p.a, x16, p.b, &beta, y, p.c, y,
                       p.c, &p.algo, nullptr, 0, stream),
        "cublasLtMatmul");
}

}  // namespace pfx::kernels
