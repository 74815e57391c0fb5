// The project's one set of PTX wrappers (every kernel includes these, nothing else wraps PTX):
// async copies (cp.async, the bulk copy engine, the tensor-map copy), L1/L2 prefetches, programmatic
// dependent launch (griddepcontrol), mbarriers, ldmatrix,
// mma.sync m16n8k16, the sm_90a warpgroup MMA (wgmma, shared-memory descriptors, register-sourced
// A), proxy fences and register reallocation (setmaxnreg). One instruction per wrapper, thin
// inline asm; include only from .cu files. Fragment layouts as in the PTX ISA.
#pragma once
#include <cuda.h>  // CUtensorMap
#include <cuda_fp16.h>

#include <cstdint>

namespace pfx::kernels::dev {

// Shared-memory address as the 32-bit value the shared-memory instructions take.
__device__ __forceinline__ uint32_t smem_addr(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// ---- cp.async (sm_80) ---------------------------------------------------------------------------
// 16-byte global -> shared copy that bypasses registers, of which the first `src_bytes` (0..16) are
// read and the rest zero-filled; src must be 16-byte aligned even when fewer bytes are read (0
// reads nothing).
__device__ __forceinline__ void cp_async_16(uint32_t dst, const void* src, uint32_t src_bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(src_bytes) : "memory");
}
// All 16 bytes when valid, else zero-filled without a read: tiles past a tensor's end need no branch.
__device__ __forceinline__ void cp_async_16(uint32_t dst, const void* src, bool valid) {
  cp_async_16(dst, src, valid ? 16u : 0u);
}
// 4-byte global -> shared copy (cp.async.ca: copies under 16 bytes go through L1).
__device__ __forceinline__ void cp_async_4(uint32_t dst, const void* src) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(dst), "l"(src) : "memory");
}
// 8-byte global -> shared copy (through L1, as cp_async_4).
__device__ __forceinline__ void cp_async_8(uint32_t dst, const void* src) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 8;\n" ::"r"(dst), "l"(src) : "memory");
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int kPending>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(kPending) : "memory");
}

// A hint to bring the 128-byte line holding p into L1 (prefetch.global.L1): no register, no wait.
__device__ __forceinline__ void prefetch_l1(const void* p) { asm volatile("prefetch.global.L1 [%0];\n" ::"l"(p)); }
// A hint to bring [p, p + bytes) into L2 through the bulk copy engine (sm_90): p 16-byte aligned,
// bytes a multiple of 16. One instruction for a whole block of bytes, no register, no wait.
__device__ __forceinline__ void prefetch_l2_bulk(const void* p, uint32_t bytes) {
  asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;\n" ::"l"(p), "r"(bytes) : "memory");
}

// ---- programmatic dependent launch (sm_90; host side: kernels/pdl_launch.h) -----------------------
// A kernel launched with the programmatic-serialization attribute may start while the kernel before
// it in the stream still runs. pdl_wait() returns once every earlier grid has completed and its
// memory is visible: such a kernel calls it before it touches anything an earlier kernel writes or
// reads (activations in, outputs out); only what no kernel writes (weights) may be read before.
// Launched without the attribute, pdl_wait() returns at once.
__device__ __forceinline__ void pdl_wait() { asm volatile("griddepcontrol.wait;\n" ::: "memory"); }
// Lets a dependent grid launched with the attribute start its blocks once every block of this grid
// has called this (or exited); it still waits in pdl_wait() for this grid's end. No effect on a
// dependent launched without the attribute.
__device__ __forceinline__ void pdl_launch_dependents() {
  asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
}

// A 16-byte shared-memory store at a 32-bit shared address (no 64-bit generic pointer to keep).
__device__ __forceinline__ void st_shared_16(uint32_t addr, uint4 v) {
  asm volatile("st.shared.v4.b32 [%0], {%1, %2, %3, %4};\n" ::"r"(addr), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w)
               : "memory");
}

// ---- ldmatrix, mma.sync (sm_80) -----------------------------------------------------------------
// Four 8x8 fp16 matrices; lane l gives the row address of matrix l/8, row l%8.
__device__ __forceinline__ void ldmatrix_x4(uint32_t (&r)[4], uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}
__device__ __forceinline__ void ldmatrix_x4_trans(uint32_t (&r)[4], uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}

// The inverse of ldmatrix_x4 (sm_90): lane i gives the address of row i % 8 of 8x8 matrix i / 8,
// and r[j] is this thread's part of matrix j in the mma fragment layout (row lane / 4, columns
// 2 (lane % 4), +1): an mma/wgmma A fragment a[0..3] goes to shared memory in one instruction.
__device__ __forceinline__ void stmatrix_x4(uint32_t addr, const uint32_t (&r)[4]) {
  asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1,%2,%3,%4};\n" ::"r"(addr), "r"(r[0]), "r"(r[1]),
               "r"(r[2]), "r"(r[3])
               : "memory");
}

// GPU-scope flag handshake between CTAs (gemm_ws's split chains): a release store publishes what
// the writer (and, through a barrier before it, its CTA) wrote; an acquire load that sees it makes
// those writes visible to the reader.
__device__ __forceinline__ void st_release_gpu(unsigned* p, unsigned v) {
  asm volatile("st.release.gpu.global.u32 [%0], %1;\n" ::"l"(p), "r"(v) : "memory");
}
__device__ __forceinline__ unsigned ld_acquire_gpu(const unsigned* p) {
  unsigned v;
  asm volatile("ld.acquire.gpu.global.u32 %0, [%1];\n" : "=r"(v) : "l"(p) : "memory");
  return v;
}

// Named barrier `id` (1..15; 0 is __syncthreads') over `threads` threads (a multiple of 32): the
// warps of a subset of the block meet without stopping the others.
__device__ __forceinline__ void named_barrier_sync(int id, int threads) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

// c[0..3] (16x8 fp32) += a (16x16 fp16, row) · b (16x8 fp16, col: b0 = k 0-7, b1 = k 8-15).
// Fragments: PTX ISA "Matrix Fragments for mma.m16n8k16 with floating point type".
__device__ __forceinline__ void mma_m16n8k16_f16_f32(float* c, const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
__device__ __forceinline__ void mma_m16n8k16_f16_f32(float (&c)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
  mma_m16n8k16_f16_f32(&c[0], a, b[0], b[1]);
}

// ---- mbarrier (sm_90) ---------------------------------------------------------------------------
// A phase completes when `count` arrivals and every expected transaction byte have arrived; a
// waiter names the phase by its parity (0 for the first). Waiting for parity 1 of a fresh barrier
// returns at once (the phase before the first counts as complete): producers start on that.
__device__ __forceinline__ void mbar_init(uint32_t bar, uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}
// Makes initialised barriers visible to the async proxy (the copy engine) before first use.
__device__ __forceinline__ void fence_mbarrier_init() {
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}
__device__ __forceinline__ void mbar_arrive(uint32_t bar) {
  asm volatile("mbarrier.arrive.release.cta.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}
// One arrival on `bar` once every cp.async this thread issued before it has landed (.noinc: the
// barrier's count must include these arrivals).
__device__ __forceinline__ void cp_async_mbar_arrive(uint32_t bar) {
  asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];\n" ::"r"(bar) : "memory");
}
// One arrival that also announces `bytes` of transactions (copies that complete_tx on `bar`).
__device__ __forceinline__ void mbar_arrive_expect_tx(uint32_t bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.release.cta.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes)
               : "memory");
}
// Blocks until the phase of `parity` has completed (acquire: its writes are visible after).
__device__ __forceinline__ void mbar_wait(uint32_t bar, uint32_t parity) {
  asm volatile(
      "{\n"
      ".reg .pred done;\n"
      "wait_%=:\n"
      "mbarrier.try_wait.parity.acquire.cta.shared::cta.b64 done, [%0], %1;\n"
      "@!done bra wait_%=;\n"
      "}\n" ::"r"(bar),
      "r"(parity)
      : "memory");
}

// ---- thread-block clusters (sm_90) ---------------------------------------------------------------
// The three special registers are constant for a kernel's life: not volatile, so the compiler may
// merge reads or read one again instead of keeping it live.
__device__ __forceinline__ uint32_t cluster_ctarank() {
  uint32_t r;
  asm("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
  return r;
}
__device__ __forceinline__ uint32_t cluster_id_x() {
  uint32_t r;
  asm("mov.u32 %0, %%clusterid.x;\n" : "=r"(r));
  return r;
}
__device__ __forceinline__ uint32_t cluster_count_x() {
  uint32_t r;
  asm("mov.u32 %0, %%nclusterid.x;\n" : "=r"(r));
  return r;
}
// The shared::cluster address of the variable at `addr` (own shared::cta address) in CTA `rank`.
__device__ __forceinline__ uint32_t mapa_shared(uint32_t addr, uint32_t rank) {
  uint32_t r;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(r) : "r"(addr), "r"(rank));
  return r;
}
// Arrival on an mbarrier of another CTA of the cluster (address from mapa_shared). CTA-scope
// release, as for a local arrival: what it publishes is that this thread's reads of a stage are
// done (their values are in registers, the MMAs that read it have completed), nothing the peer
// must see. Cluster scope compiles to MEMBAR.ALL.GPU + error barriers before every arrival (SASS):
// measured on the H200 it held the cluster kernels at a third of their speed.
__device__ __forceinline__ void mbar_arrive_remote(uint32_t remote_bar) {
  asm volatile("mbarrier.arrive.release.cta.shared::cluster.b64 _, [%0];\n" ::"r"(remote_bar) : "memory");
}
// Every thread of every CTA of the cluster.
__device__ __forceinline__ void cluster_sync() {
  asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;\n" ::: "memory");
}

// ---- bulk copies (sm_90): completion counted in bytes on an mbarrier --------------------------
// `bytes` (a multiple of 16) from global `src` to shared `dst`, both 16-byte aligned.
__device__ __forceinline__ void bulk_copy_g2s(uint32_t dst, const void* src, uint32_t bytes, uint32_t bar) {
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(dst),
               "l"(src), "r"(bytes), "r"(bar)
               : "memory");
}
// The box of a 2-D tensor map at element coordinates (c0 innermost, c1); parts outside the tensor
// are zero-filled and still count as transaction bytes. `map` must be a __grid_constant__ kernel
// parameter (or in global/constant memory).
__device__ __forceinline__ void tma_load_2d(uint32_t dst, const CUtensorMap* map, int c0, int c1, uint32_t bar) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];\n" ::"r"(
          dst),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(bar)
      : "memory");
}

// tma_load_2d, written to the same shared offset `dst` in every CTA of `cta_mask` (cluster ranks),
// each of whose mbarrier at offset `bar` counts the bytes.
__device__ __forceinline__ void tma_load_2d_multicast(uint32_t dst, const CUtensorMap* map, int c0, int c1, uint32_t bar,
                                                      uint16_t cta_mask) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster "
      "[%0], [%1, {%2, %3}], [%4], %5;\n" ::"r"(dst),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(bar), "h"(cta_mask)
      : "memory");
}

// ---- register reallocation between warpgroups (sm_90a) ----------------------------------------
// Takes effect only with a register cap at entry (__launch_bounds__(threads, 1)); every warp of a
// warpgroup executes the same one.
template <int kRegs>
__device__ __forceinline__ void setmaxnreg_inc() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(kRegs));
}
template <int kRegs>
__device__ __forceinline__ void setmaxnreg_dec() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(kRegs));
}

// ---- warpgroup MMA (sm_90a) ---------------------------------------------------------------------
// Shared-memory matrix descriptor: a K-major tile whose rows are 128 bytes (64 fp16), stored with
// the 128-byte swizzle (16-byte chunk c of row r at chunk c ^ (r % 8); what a tensor map with
// CU_TENSOR_MAP_SWIZZLE_128B writes), 8-row groups 1024 bytes apart, the tile 1024-byte aligned.
// Advancing K by 16 elements adds 32 bytes to the address.
__device__ __forceinline__ uint64_t wgmma_desc_sw128(uint32_t smem_addr) {
  uint64_t d = 0;
  d |= static_cast<uint64_t>((smem_addr & 0x3FFFFu) >> 4);  // start address, bits 0-13
  d |= static_cast<uint64_t>(16u >> 4) << 16;               // leading byte offset (unused when swizzled K-major)
  d |= static_cast<uint64_t>(1024u >> 4) << 32;             // stride byte offset: next 8-row group
  d |= static_cast<uint64_t>(1u) << 62;                     // swizzle mode 1 = 128 bytes
  return d;
}

// The same tile read as an MN-major operand (wgmma's imm-trans-b = 1): B[k][n] with n contiguous,
// rows of 64 fp16 along n (128 bytes, 128-byte swizzle), 8 k-rows of an atom 128 bytes apart, the
// next 8 k-rows `k8_stride` bytes on, the next 64 n `n64_stride` bytes on (CUTLASS's canonical
// MN-major SW128 layout ((8,8,m),(8,k)) : ((1,8,LBO),(64,SBO)) in fp16 elements: LBO steps along
// N, SBO along K). Advancing K by 16 elements adds 2 * k8_stride.
__device__ __forceinline__ uint64_t wgmma_desc_sw128_mn(uint32_t smem_addr, uint32_t n64_stride, uint32_t k8_stride) {
  uint64_t d = 0;
  d |= static_cast<uint64_t>((smem_addr & 0x3FFFFu) >> 4);
  d |= static_cast<uint64_t>((n64_stride & 0x3FFFFu) >> 4) << 16;  // leading byte offset: along N
  d |= static_cast<uint64_t>((k8_stride & 0x3FFFFu) >> 4) << 32;   // stride byte offset: along K
  d |= static_cast<uint64_t>(1u) << 62;
  return d;
}

__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int kPending>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(kPending) : "memory");
}
// Keeps the compiler from moving reads/writes of these registers across a wgmma issue or wait (the
// tensor cores own accumulators and register-sourced A operands in between).
template <int N>
__device__ __forceinline__ void fence_operands(float (&r)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i) asm volatile("" : "+f"(r[i])::"memory");
}
template <int N>
__device__ __forceinline__ void fence_operands(uint32_t (&r)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i) asm volatile("" : "+r"(r[i])::"memory");
}
// Orders this thread's generic-proxy shared-memory writes (st.shared, cp.async) before later
// async-proxy reads (wgmma operands, bulk copies out); a barrier after it extends that to the
// other threads.
__device__ __forceinline__ void fence_proxy_async_smem() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

// wgmma fragments (PTX ISA "Register Fragments", m64nNk16, f16 inputs, f32 accumulators). Warp w
// of the warpgroup owns rows 16w .. 16w+15; g = lane / 4, c = lane % 4.
//  A (registers, 4 × f16x2): a[0] = (row g, k 2c / 2c+1), a[1] = (row g+8, k 2c / 2c+1),
//                            a[2] = (row g, k 2c+8 / 2c+9), a[3] = (row g+8, k 2c+8 / 2c+9).
//  D (N/2 fp32): d[4j + e] = row 16w + g + 8·(e/2), column 8j + 2c + e%2.

// "%<t>0, ..., %<t>9" and "+f"(d[<t>0]), ..., "+f"(d[<t>9]): ten asm operands (t: the tens, empty for 0-9).
#define PFX_WGMMA_OPS10(t) \
  "%" #t "0, %" #t "1, %" #t "2, %" #t "3, %" #t "4, %" #t "5, %" #t "6, %" #t "7, %" #t "8, %" #t "9"
#define PFX_WGMMA_OUT10(d, t)                                                                                  \
  "+f"(d[t##0]), "+f"(d[t##1]), "+f"(d[t##2]), "+f"(d[t##3]), "+f"(d[t##4]), "+f"(d[t##5]), "+f"(d[t##6]), \
      "+f"(d[t##7]), "+f"(d[t##8]), "+f"(d[t##9])
// D's N/2 = 32, 64 or 128 accumulators: the operand list inside the braces (%0 .. %(N/2 - 1)) and
// the output constraints d[0] .. d[N/2 - 1].
#define PFX_WGMMA_D32 PFX_WGMMA_OPS10() ", " PFX_WGMMA_OPS10(1) ", " PFX_WGMMA_OPS10(2) ", %30, %31 "
#define PFX_WGMMA_D32_OUT(d) \
  PFX_WGMMA_OUT10(d, ), PFX_WGMMA_OUT10(d, 1), PFX_WGMMA_OUT10(d, 2), "+f"(d[30]), "+f"(d[31])
#define PFX_WGMMA_D64                                                                                  \
  PFX_WGMMA_OPS10() ", " PFX_WGMMA_OPS10(1) ", " PFX_WGMMA_OPS10(2) ", " PFX_WGMMA_OPS10(3) ", " \
      PFX_WGMMA_OPS10(4) ", " PFX_WGMMA_OPS10(5) ", %60, %61, %62, %63 "
#define PFX_WGMMA_D64_OUT(d)                                                                               \
  PFX_WGMMA_OUT10(d, ), PFX_WGMMA_OUT10(d, 1), PFX_WGMMA_OUT10(d, 2), PFX_WGMMA_OUT10(d, 3),              \
      PFX_WGMMA_OUT10(d, 4), PFX_WGMMA_OUT10(d, 5), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
#define PFX_WGMMA_D128                                                                                     \
  PFX_WGMMA_OPS10() ", " PFX_WGMMA_OPS10(1) ", " PFX_WGMMA_OPS10(2) ", " PFX_WGMMA_OPS10(3) ", "     \
      PFX_WGMMA_OPS10(4) ", " PFX_WGMMA_OPS10(5) ", " PFX_WGMMA_OPS10(6) ", " PFX_WGMMA_OPS10(7) ", " \
      PFX_WGMMA_OPS10(8) ", " PFX_WGMMA_OPS10(9) ", " PFX_WGMMA_OPS10(10) ", " PFX_WGMMA_OPS10(11) \
      ", %120, %121, %122, %123, %124, %125, %126, %127 "
#define PFX_WGMMA_D128_OUT(d)                                                                              \
  PFX_WGMMA_OUT10(d, ), PFX_WGMMA_OUT10(d, 1), PFX_WGMMA_OUT10(d, 2), PFX_WGMMA_OUT10(d, 3),              \
      PFX_WGMMA_OUT10(d, 4), PFX_WGMMA_OUT10(d, 5), PFX_WGMMA_OUT10(d, 6), PFX_WGMMA_OUT10(d, 7),         \
      PFX_WGMMA_OUT10(d, 8), PFX_WGMMA_OUT10(d, 9), PFX_WGMMA_OUT10(d, 10), PFX_WGMMA_OUT10(d, 11),       \
      "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]),  \
      "+f"(d[127])

// D[64 x N] (+)= A[64 x 16] · B[N x 16]ᵀ: wgmma_ss_m64n<N>k16 with A and B K-major in shared memory
// (descriptors), wgmma_rs_m64n<N>k16 with A in registers (a[0..3]: the fragment above) and B a
// descriptor. D holds N/2 fp32 per thread (asm operands %0 .. %(N/2 - 1), the list DLIST / DOUT);
// the operands after it are numbered A, B, accumulate-flag (ss) or A0..A3, B, flag (rs).
#define PFX_WGMMA_SS(N, kRegs, DLIST, DOUT, iA, iB, iAcc)                                                        \
  __device__ __forceinline__ void wgmma_ss_m64n##N##k16(float (&d)[kRegs], uint64_t desc_a, uint64_t desc_b,     \
                                                         int accumulate) {                                      \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %" #iAcc ", 0;\n"                                             \
                 "wgmma.mma_async.sync.aligned.m64n" #N "k16.f32.f16.f16 {" DLIST "}, %" #iA ", %" #iB          \
                 ", p, 1, 1, 0, 0;\n}\n"                                                                         \
                 : DOUT(d)                                                                                       \
                 : "l"(desc_a), "l"(desc_b), "r"(accumulate)                                                     \
                 : "memory");                                                                                    \
  }
// SUFFIX/TB: wgmma_rs_m64n<N>k16 reads B K-major (TB 0), wgmma_rs_m64n<N>k16_bmn MN-major (TB 1,
// the descriptor from wgmma_desc_sw128_mn).
#define PFX_WGMMA_RS(N, SUFFIX, TB, kRegs, DLIST, DOUT, iA0, iA1, iA2, iA3, iB, iAcc)                            \
  __device__ __forceinline__ void wgmma_rs_m64n##N##k16##SUFFIX(float (&d)[kRegs], const uint32_t (&a)[4],      \
                                                                 uint64_t desc_b, int accumulate) {             \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %" #iAcc ", 0;\n"                                             \
                 "wgmma.mma_async.sync.aligned.m64n" #N "k16.f32.f16.f16 {" DLIST "}, {%" #iA0 ", %" #iA1       \
                 ", %" #iA2 ", %" #iA3 "}, %" #iB ", p, 1, 1, " #TB ";\n}\n"                                     \
                 : DOUT(d)                                                                                       \
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(accumulate)                      \
                 : "memory");                                                                                    \
  }

PFX_WGMMA_SS(128, 64, PFX_WGMMA_D64, PFX_WGMMA_D64_OUT, 64, 65, 66)
PFX_WGMMA_SS(256, 128, PFX_WGMMA_D128, PFX_WGMMA_D128_OUT, 128, 129, 130)
PFX_WGMMA_RS(64, , 0, 32, PFX_WGMMA_D32, PFX_WGMMA_D32_OUT, 32, 33, 34, 35, 36, 37)
PFX_WGMMA_RS(128, , 0, 64, PFX_WGMMA_D64, PFX_WGMMA_D64_OUT, 64, 65, 66, 67, 68, 69)
PFX_WGMMA_RS(256, , 0, 128, PFX_WGMMA_D128, PFX_WGMMA_D128_OUT, 128, 129, 130, 131, 132, 133)
PFX_WGMMA_RS(64, _bmn, 1, 32, PFX_WGMMA_D32, PFX_WGMMA_D32_OUT, 32, 33, 34, 35, 36, 37)
PFX_WGMMA_RS(128, _bmn, 1, 64, PFX_WGMMA_D64, PFX_WGMMA_D64_OUT, 64, 65, 66, 67, 68, 69)
#undef PFX_WGMMA_SS
#undef PFX_WGMMA_RS

}  // namespace pfx::kernels::dev
