// CUDA injection: InitializeInjection (called by the CUDA driver during cuInit when
// CUDA_INJECTION64_PATH names this library) sets up CUPTI:
//  - the activity API for kernels (CONCURRENT_KERNEL: no serialization), memcpy, memset, devices;
//    buffers come back through buffer_completed(), which converts records to journal lines;
//  - the callback API on every runtime/driver API whose name contains "Launch" (plus Memcpy/Memset
//    APIs when those are recorded): at API entry, on the launching thread, the correlation id is
//    recorded with the innermost open NVTX range (RangeTracker::launch). The kernel record carries
//    the same correlation id, which is how each kernel meets its range stack. Names are matched
//    rather than listed because the set grows with CUDA (13.0 added __cudaLaunchKernel).
//  - resource callbacks: count live contexts, and force a flush when one starts being destroyed
//    (the context is still alive then; flushing after teardown can deadlock).
#include <cuda.h>
#include <cupti.h>
#include <cxxabi.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <unordered_map>

#include "trace/injection/cupti_check.h"
#include "trace/injection/injection_state.h"

namespace pfx::trace::injection {
namespace {

constexpr std::size_t kBufferAlignment = 8;  // ACTIVITY_RECORD_ALIGNMENT

thread_local bool in_flush = false;  // CUPTI delivers buffers on the flushing thread: no re-entry

// Demangled and raw names per CUPTI name pointer (CUPTI shares one string per kernel).
std::pair<std::string, std::string> kernel_names(const char* mangled) {
  static auto* cache = new std::unordered_map<const char*, std::pair<std::string, std::string>>();
  static auto* mutex = new std::mutex();
  if (mangled == nullptr) return {"(unnamed kernel)", ""};
  std::lock_guard lock(*mutex);
  auto it = cache->find(mangled);
  // The pointer identifies a kernel while its module is loaded; after an unload the address may
  // name another kernel, so the text is compared too.
  if (it != cache->end() && it->second.second == mangled) return it->second;
  int status = 0;
  std::unique_ptr<char, decltype(&std::free)> demangled(abi::__cxa_demangle(mangled, nullptr, nullptr, &status),
                                                         &std::free);
  std::pair<std::string, std::string> names{status == 0 && demangled ? demangled.get() : mangled, mangled};
  (*cache)[mangled] = names;
  return names;
}

const char* copy_kind_name(uint8_t kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD: return "HtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH: return "DtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOA: return "HtoA";
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOH: return "AtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOA: return "AtoA";
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOD: return "AtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOA: return "DtoA";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD: return "DtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH: return "HtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP: return "PtoP";
    default: return "unknown";
  }
}

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  const std::size_t bytes = static_cast<std::size_t>(state().options.buffer_mb) << 20;
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(kBufferAlignment, bytes));
  *size = *buffer != nullptr ? bytes : 0;  // a zero-size buffer makes CUPTI drop (and count) records
  *max_records = 0;                        // as many as fit
}

// A forced flush hands out records still in flight (no end time yet): those are counted as
// incomplete instead of written. Kernel, memcpy and memset records share the start/end fields.
template <typename ActivityRecord>
bool still_in_flight(const ActivityRecord* r) {
  if (r->start != 0 && r->end >= r->start) return false;
  state().incomplete_records.fetch_add(1);
  return true;
}

// The fields every memcpy, peer memcpy and memset record has; the caller adds the kind-specific ones.
template <typename ActivityRecord>
TransferEvent transfer_event(const ActivityRecord* m) {
  TransferEvent t;
  t.correlation_id = m->correlationId;
  t.bytes = m->bytes;
  t.start_ns = m->start;
  t.end_ns = m->end;
  t.device = m->deviceId;
  t.stream = m->streamId;
  return t;
}

// The journal line of a memcpy, peer memcpy or memset record (none while it is in flight);
// `finish` adds the fields only that kind of record has.
template <typename ActivityRecord, typename Finish>
std::string transfer_line(const CUpti_Activity* record, Finish finish) {
  const auto* m = reinterpret_cast<const ActivityRecord*>(record);
  if (still_in_flight(m)) return {};
  TransferEvent t = transfer_event(m);
  finish(*m, t);
  return journal_line(t);
}

std::string record_line(const CUpti_Activity* record) {
  switch (record->kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
      const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(record);
      if (still_in_flight(k)) return {};
      TraceKernel kernel;
      std::tie(kernel.name, kernel.mangled) = kernel_names(k->name);
      kernel.correlation_id = k->correlationId;
      kernel.device = k->deviceId;
      kernel.context = k->contextId;
      kernel.stream = k->streamId;
      kernel.grid = {k->gridX, k->gridY, k->gridZ};
      kernel.block = {k->blockX, k->blockY, k->blockZ};
      kernel.registers = k->registersPerThread;
      kernel.static_smem = k->staticSharedMemory;
      kernel.dynamic_smem = k->dynamicSharedMemory;
      kernel.local_mem_per_thread = k->localMemoryPerThread;
      kernel.start_ns = k->start;
      kernel.end_ns = k->end;
      return journal_line(kernel);
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY:
      return transfer_line<CUpti_ActivityMemcpy6>(record, [](const CUpti_ActivityMemcpy6& m, TransferEvent& t) {
        t.copy_kind = copy_kind_name(m.copyKind);
        t.runtime_correlation_id = m.runtimeCorrelationId;
      });
    case CUPTI_ACTIVITY_KIND_MEMCPY2:
      return transfer_line<CUpti_ActivityMemcpyPtoP4>(record, [](const CUpti_ActivityMemcpyPtoP4&, TransferEvent& t) { t.copy_kind = "PtoP"; });
    case CUPTI_ACTIVITY_KIND_MEMSET:
      return transfer_line<CUpti_ActivityMemset4>(record, [](const CUpti_ActivityMemset4&, TransferEvent& t) { t.is_memset = true; });
    case CUPTI_ACTIVITY_KIND_DEVICE: {
      const auto* d = reinterpret_cast<const CUpti_ActivityDevice5*>(record);
      TraceDevice device;
      device.id = d->id;
      device.name = d->name != nullptr ? d->name : "";
      device.cc_major = d->computeCapabilityMajor;
      device.cc_minor = d->computeCapabilityMinor;
      device.multiprocessors = d->numMultiprocessors;
      device.global_memory_bytes = d->globalMemorySize;
      device.core_clock_khz = d->coreClockRate;
      return journal_line(device);
    }
    default: return {};  // kinds we did not enable
  }
}

void CUPTIAPI buffer_completed(CUcontext context, uint32_t stream_id, uint8_t* buffer, size_t /*size*/,
                               size_t valid_size) {
  std::unique_ptr<uint8_t, decltype(&std::free)> owned(buffer, &std::free);
  State& s = state();
  if (!s.enabled || s.closed.load() || buffer == nullptr) return;
  try {
    std::string batch;
    CUpti_Activity* record = nullptr;
    for (;;) {
      CUptiResult r = cuptiActivityGetNextRecord(buffer, valid_size, &record);
      if (r == CUPTI_ERROR_MAX_LIMIT_REACHED) break;
      if (!KT_CUPTI_CHECK(r)) {
        batch += journal_note_line("an activity buffer could not be read to the end; some records are missing");
        break;
      }
      batch += record_line(record);
    }
    size_t dropped = 0;
    if (KT_CUPTI_CHECK(cuptiActivityGetNumDroppedRecords(context, stream_id, &dropped)) && dropped > 0) {
      batch += journal_dropped_line(dropped);
    }
    // NVTX and launch records pending now are older than these kernels' launches' completion:
    // write them in the same batch so the journal never holds a kernel without its launch.
    write_to_journal(std::move(batch));
  } catch (const std::exception& e) {
    log_message(std::string("activity buffer dropped: ") + e.what());
  }
}

void CUPTIAPI api_callback(void* /*userdata*/, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data) {
  State& s = state();
  if (!s.enabled || s.closed.load()) return;
  try {
    if (domain == CUPTI_CB_DOMAIN_RUNTIME_API || domain == CUPTI_CB_DOMAIN_DRIVER_API) {
      const auto* info = static_cast<const CUpti_CallbackData*>(data);
      if (info->callbackSite == CUPTI_API_ENTER) {
        s.tracker.launch(info->correlationId, current_thread_id(), info->functionName);
      }
    } else if (domain == CUPTI_CB_DOMAIN_RESOURCE) {
      if (cbid == CUPTI_CBID_RESOURCE_CONTEXT_CREATED) {
        s.live_contexts.fetch_add(1);
      } else if (cbid == CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING) {
        // Last chance for this context's records: it is still alive now.
        flush_activity(/*forced=*/true);
        s.live_contexts.fetch_sub(1);
      }
    }
  } catch (...) {
    // A callback must not throw into CUDA; the record is lost and the count will show it.
  }
}

// Enables the callbacks of every API in `domain` whose name contains one of `words`.
int enable_callbacks_named(CUpti_SubscriberHandle subscriber, CUpti_CallbackDomain domain, uint32_t count,
                           std::initializer_list<const char*> words) {
  int enabled = 0;
  for (uint32_t cbid = 1; cbid < count; ++cbid) {
    const char* name = nullptr;
    // Not checked with KT_CUPTI_CHECK: the id space has gaps, for which an error is the answer.
    if (cuptiGetCallbackName(domain, cbid, &name) != CUPTI_SUCCESS || name == nullptr) continue;
    bool wanted = false;
    for (const char* w : words) wanted = wanted || std::strstr(name, w) != nullptr;
    if (wanted && KT_CUPTI_CHECK(cuptiEnableCallback(1, subscriber, domain, cbid))) ++enabled;
  }
  return enabled;
}

void setup_cupti() {
  State& s = state();
  const RecordKinds& kinds = s.options.kinds;
  // Records are decoded with this build's header layouts (CUpti_ActivityKernel10, ...); a libcupti
  // of another API version (a program that ships its own) may lay them out differently.
  uint32_t version = 0;
  if (KT_CUPTI_CHECK(cuptiGetVersion(&version)) && version != CUPTI_API_VERSION) {
    note("libcupti API version " + std::to_string(version) + " differs from the " + std::to_string(CUPTI_API_VERSION) +
         " this library was built with; check kernel names and times for sanity");
  }
  if (!KT_CUPTI_CHECK(cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed))) {
    note("CUPTI activity callbacks could not be registered: no kernel records (another profiler attached?)");
    return;
  }
  if (!KT_CUPTI_CHECK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_DEVICE))) {
    note("device records unavailable");
  }
  if (kinds.kernel && !KT_CUPTI_CHECK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL))) {
    note("kernel activity could not be enabled: no kernel records");
  }
  if (kinds.memcpy) {
    if (!KT_CUPTI_CHECK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMCPY))) note("memcpy activity could not be enabled");
    if (!KT_CUPTI_CHECK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMCPY2))) note("peer memcpy activity could not be enabled");
  }
  if (kinds.memset && !KT_CUPTI_CHECK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMSET))) {
    note("memset activity could not be enabled");
  }
  s.cupti_ready.store(true);

  CUpti_SubscriberHandle subscriber = nullptr;
  if (!KT_CUPTI_CHECK(cuptiSubscribe(&subscriber, api_callback, nullptr))) {
    note("CUPTI callbacks unavailable (another CUPTI subscriber?): kernels are not attributed to NVTX ranges, "
         "and records of contexts destroyed before exit may be lost");
    return;
  }
  bool resource_ok = KT_CUPTI_CHECK(cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_RESOURCE,
                                                        CUPTI_CBID_RESOURCE_CONTEXT_CREATED)) &&
                     KT_CUPTI_CHECK(cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_RESOURCE,
                                                        CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING));
  if (resource_ok) {
    s.contexts_tracked.store(true);
  } else {
    note("context callbacks unavailable: records of contexts destroyed before exit may be lost");
  }
  if (kinds.nvtx) {
    std::initializer_list<const char*> launch_words = {"Launch"};
    std::initializer_list<const char*> all_words = {"Launch", "Memcpy", "Memset"};
    auto words = (kinds.memcpy || kinds.memset) ? all_words : launch_words;
    int runtime = enable_callbacks_named(subscriber, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_SIZE, words);
    int driver = enable_callbacks_named(subscriber, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_SIZE, words);
    if (runtime == 0 && driver == 0) note("no launch callbacks could be enabled: kernels are not attributed to NVTX ranges");
  }
}

}  // namespace

void flush_activity(bool forced) {
  if (in_flush) return;
  in_flush = true;
  KT_CUPTI_CHECK(cuptiActivityFlushAll(forced ? CUPTI_ACTIVITY_FLAG_FLUSH_FORCED : 0));
  in_flush = false;
}

}  // namespace pfx::trace::injection

extern "C" __attribute__((visibility("default"))) int InitializeInjection(void) {
  using namespace pfx::trace::injection;
  try {
    State& s = state();
    if (!s.enabled) return 1;  // never fail CUDA's initialization because of the tracer
    static std::once_flag once;
    std::call_once(once, [] {
      setup_cupti();
      // Registered again now, after CUDA started initializing, so that it runs before the CUDA
      // runtime's own exit teardown where the runtime registered its handler first.
      register_exit_handler();
    });
  } catch (...) {
    std::fprintf(stderr, "kerneltrace: initialization failed; the program runs untraced\n");
  }
  return 1;
}
