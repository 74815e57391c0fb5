// NVTX injection: InitializeInjectionNvtx2 fills the calling module's NVTX function table with our
// range hooks, so NVTX_INJECTION64_PATH=libkerneltrace.so routes every range of that module here.
//
// Why our own NVTX hooks rather than CUPTI's (NVTX_INJECTION64_PATH=libcupti.so + the NVTX callback
// domain or MARKER activity records): the hooks run on the calling thread at push time, so the range
// stack each launch is attributed to is exact, the uint64 FLOP payload is read straight from the
// event attributes, ranges pushed before CUDA initializes are kept, and the same code runs (and is
// tested) on machines without a GPU. Timestamps come from cuptiGetTimestamp, the clock of CUPTI's
// kernel records.
//
// Each NVTX-using module (each copy of the header-only NVTX3) initializes separately and calls this
// entry point once; every call installs the same hooks into that module's table.
#define NVTX_NO_IMPL  // we implement the NVTX API; we need its types, not its inline client code
#include <nvtx3/nvToolsExt.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_set>

#include "trace/injection/injection_state.h"
#include "util/utf8.h"

namespace pfx::trace::injection {
namespace {

constexpr std::string_view kDefaultDomain = "default";

// Registered strings and domains: we hand out pointers to our own interned records and accept
// only pointers we handed out.
class Registry {
 public:
  const void* intern(const std::string& text) {
    std::lock_guard lock(mutex_);
    auto& slot = strings_[text];
    if (!slot) {
      slot = std::make_unique<std::string>(text);
      handles_.insert(slot.get());
    }
    return slot.get();
  }
  std::string lookup(const void* handle) const {
    std::lock_guard lock(mutex_);
    if (handle == nullptr || !handles_.count(handle)) return {};
    return *static_cast<const std::string*>(handle);
  }

 private:
  mutable std::mutex mutex_;
  std::map<std::string, std::unique_ptr<std::string>> strings_;
  std::unordered_set<const void*> handles_;
};

Registry& domains() {
  static auto* r = new Registry();  // never destroyed: hooks may run during exit
  return *r;
}
Registry& strings() {
  static auto* r = new Registry();
  return *r;
}

std::string wide_to_utf8(const wchar_t* text) {
  std::string out;
  if (text == nullptr) return out;
  for (; *text != L'\0'; ++text) append_utf8(out, static_cast<char32_t>(*text));
  return out;
}

std::string domain_name(nvtxDomainHandle_t domain) {
  if (domain == nullptr) return std::string(kDefaultDomain);
  std::string name = domains().lookup(domain);
  return name.empty() ? "unknown-domain" : name;
}

// The attribute struct's `size` says which fields the caller filled in (older NVTX versions).
bool has_field(const nvtxEventAttributes_t* a, std::size_t end_offset) {
  return a != nullptr && static_cast<std::size_t>(a->size) >= end_offset;
}

std::string message_of(const nvtxEventAttributes_t* a) {
  if (!has_field(a, offsetof(nvtxEventAttributes_t, message) + sizeof(a->message))) return {};
  switch (a->messageType) {
    case NVTX_MESSAGE_TYPE_ASCII: return a->message.ascii ? std::string(a->message.ascii) : std::string();
    case NVTX_MESSAGE_TYPE_UNICODE: return wide_to_utf8(a->message.unicode);
    case NVTX_MESSAGE_TYPE_REGISTERED: return strings().lookup(a->message.registered);
    default: return {};
  }
}

Payload payload_of(const nvtxEventAttributes_t* a) {
  Payload p;
  if (!has_field(a, offsetof(nvtxEventAttributes_t, payload) + sizeof(a->payload))) return p;
  switch (a->payloadType) {
    case NVTX_PAYLOAD_TYPE_UNSIGNED_INT64: p.type = Payload::Type::u64; p.as_u64 = a->payload.ullValue; break;
    case NVTX_PAYLOAD_TYPE_INT64: p.type = Payload::Type::i64; p.as_i64 = a->payload.llValue; break;
    case NVTX_PAYLOAD_TYPE_DOUBLE: p.type = Payload::Type::f64; p.as_f64 = a->payload.dValue; break;
    case NVTX_PAYLOAD_TYPE_UNSIGNED_INT32: p.type = Payload::Type::u32; p.as_u64 = a->payload.uiValue; break;
    case NVTX_PAYLOAD_TYPE_INT32: p.type = Payload::Type::i32; p.as_i64 = a->payload.iValue; break;
    case NVTX_PAYLOAD_TYPE_FLOAT: p.type = Payload::Type::f32; p.as_f64 = a->payload.fValue; break;
    default: break;  // unknown or extension payloads are not recorded
  }
  return p;
}

bool active() {
  State& s = state();
  return s.enabled && !s.closed.load();
}

// ---- hooks: each catches everything, NVTX is a C API ----

int push(nvtxDomainHandle_t domain, const std::string& name, const Payload& payload) {
  if (!active()) return 0;
  try {
    return state().tracker.push(current_thread_id(), domain_name(domain), name, payload, now_ns());
  } catch (...) {
    return -1;
  }
}

int pop(nvtxDomainHandle_t domain) {
  if (!active()) return 0;
  try {
    return state().tracker.pop(current_thread_id(), domain_name(domain), now_ns());
  } catch (...) {
    return -1;
  }
}

nvtxRangeId_t start(nvtxDomainHandle_t domain, const std::string& name, const Payload& payload) {
  if (!active()) return 0;
  try {
    return state().tracker.start(current_thread_id(), domain_name(domain), name, payload, now_ns());
  } catch (...) {
    return 0;
  }
}

void end(nvtxRangeId_t id) {
  if (!active()) return;
  try {
    state().tracker.end(id, current_thread_id(), now_ns());
  } catch (...) {
  }
}

int NVTX_API hook_RangePushEx(const nvtxEventAttributes_t* a) { return push(nullptr, message_of(a), payload_of(a)); }
int NVTX_API hook_RangePushA(const char* m) { return push(nullptr, m ? m : "", Payload{}); }
int NVTX_API hook_RangePushW(const wchar_t* m) { return push(nullptr, wide_to_utf8(m), Payload{}); }
int NVTX_API hook_RangePop() { return pop(nullptr); }
nvtxRangeId_t NVTX_API hook_RangeStartEx(const nvtxEventAttributes_t* a) {
  return start(nullptr, message_of(a), payload_of(a));
}
nvtxRangeId_t NVTX_API hook_RangeStartA(const char* m) { return start(nullptr, m ? m : "", Payload{}); }
nvtxRangeId_t NVTX_API hook_RangeStartW(const wchar_t* m) { return start(nullptr, wide_to_utf8(m), Payload{}); }
void NVTX_API hook_RangeEnd(nvtxRangeId_t id) { end(id); }

int NVTX_API hook_DomainRangePushEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t* a) {
  return push(d, message_of(a), payload_of(a));
}
int NVTX_API hook_DomainRangePop(nvtxDomainHandle_t d) { return pop(d); }
nvtxRangeId_t NVTX_API hook_DomainRangeStartEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t* a) {
  return start(d, message_of(a), payload_of(a));
}
void NVTX_API hook_DomainRangeEnd(nvtxDomainHandle_t, nvtxRangeId_t id) { end(id); }

nvtxDomainHandle_t NVTX_API hook_DomainCreateA(const char* name) {
  try {
    return static_cast<nvtxDomainHandle_t>(const_cast<void*>(domains().intern(name ? name : "")));
  } catch (...) {
    return nullptr;
  }
}
nvtxDomainHandle_t NVTX_API hook_DomainCreateW(const wchar_t* name) {
  try {
    return static_cast<nvtxDomainHandle_t>(const_cast<void*>(domains().intern(wide_to_utf8(name))));
  } catch (...) {
    return nullptr;
  }
}
void NVTX_API hook_DomainDestroy(nvtxDomainHandle_t) {}  // handles stay valid: ranges may still name them

nvtxStringHandle_t NVTX_API hook_DomainRegisterStringA(nvtxDomainHandle_t, const char* text) {
  try {
    return static_cast<nvtxStringHandle_t>(const_cast<void*>(strings().intern(text ? text : "")));
  } catch (...) {
    return nullptr;
  }
}
nvtxStringHandle_t NVTX_API hook_DomainRegisterStringW(nvtxDomainHandle_t, const wchar_t* text) {
  try {
    return static_cast<nvtxStringHandle_t>(const_cast<void*>(strings().intern(wide_to_utf8(text))));
  } catch (...) {
    return nullptr;
  }
}

template <class Fn>
NvtxFunctionPointer as_entry(Fn* fn) {
  return reinterpret_cast<NvtxFunctionPointer>(fn);
}

struct Hook {
  unsigned id;
  NvtxFunctionPointer fn;
};

// Writes our hooks into one module's table; false when NVTX does not hand out that table.
bool install(const NvtxExportTableCallbacks* callbacks, NvtxCallbackModule module, std::initializer_list<Hook> hooks) {
  NvtxFunctionTable table = nullptr;
  unsigned int size = 0;
  if (callbacks->GetModuleFunctionTable(module, &table, &size) == 0 || table == nullptr) return false;
  for (const Hook& h : hooks) {
    // `size` counts the table's slots; a client built with an older NVTX may have fewer.
    if (h.id < size && table[h.id] != nullptr) *table[h.id] = h.fn;
  }
  return true;
}

}  // namespace
}  // namespace pfx::trace::injection

extern "C" __attribute__((visibility("default"))) int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get_table) {
  using namespace pfx::trace::injection;
  try {
    // Decide from the options alone before creating any state: returning 0 makes NVTX unload this
    // library again, and state created by then would have registered an exit handler in it.
    pfx::trace::TraceOptions options;
    try {
      options = pfx::trace::options_from_env([](const char* name) { return std::getenv(name); });
    } catch (const std::exception&) {
      return 0;  // state() reports bad options when CUDA initializes
    }
    if (!options.kinds.nvtx || get_table == nullptr) return 0;
    State& s = state();
    if (!s.enabled) return 0;
    const auto* callbacks = static_cast<const NvtxExportTableCallbacks*>(get_table(NVTX_ETID_CALLBACKS));
    if (callbacks == nullptr || callbacks->struct_size < sizeof(NvtxExportTableCallbacks) ||
        callbacks->GetModuleFunctionTable == nullptr) {
      log_message("NVTX export table missing or too old; NVTX ranges are not recorded for this module");
      return 0;
    }
    const auto* version = static_cast<const NvtxExportTableVersionInfo*>(get_table(NVTX_ETID_VERSIONINFO));
    if (version != nullptr && version->struct_size >= sizeof(NvtxExportTableVersionInfo) &&
        version->SetInjectionNvtxVersion != nullptr) {
      version->SetInjectionNvtxVersion(NVTX_VERSION);
    }
    bool core = install(callbacks, NVTX_CB_MODULE_CORE,
                        {{NVTX_CBID_CORE_RangePushEx, as_entry(hook_RangePushEx)},
                         {NVTX_CBID_CORE_RangePushA, as_entry(hook_RangePushA)},
                         {NVTX_CBID_CORE_RangePushW, as_entry(hook_RangePushW)},
                         {NVTX_CBID_CORE_RangePop, as_entry(hook_RangePop)},
                         {NVTX_CBID_CORE_RangeStartEx, as_entry(hook_RangeStartEx)},
                         {NVTX_CBID_CORE_RangeStartA, as_entry(hook_RangeStartA)},
                         {NVTX_CBID_CORE_RangeStartW, as_entry(hook_RangeStartW)},
                         {NVTX_CBID_CORE_RangeEnd, as_entry(hook_RangeEnd)}});
    bool core2 = install(callbacks, NVTX_CB_MODULE_CORE2,
                         {{NVTX_CBID_CORE2_DomainRangePushEx, as_entry(hook_DomainRangePushEx)},
                          {NVTX_CBID_CORE2_DomainRangePop, as_entry(hook_DomainRangePop)},
                          {NVTX_CBID_CORE2_DomainRangeStartEx, as_entry(hook_DomainRangeStartEx)},
                          {NVTX_CBID_CORE2_DomainRangeEnd, as_entry(hook_DomainRangeEnd)},
                          {NVTX_CBID_CORE2_DomainCreateA, as_entry(hook_DomainCreateA)},
                          {NVTX_CBID_CORE2_DomainCreateW, as_entry(hook_DomainCreateW)},
                          {NVTX_CBID_CORE2_DomainDestroy, as_entry(hook_DomainDestroy)},
                          {NVTX_CBID_CORE2_DomainRegisterStringA, as_entry(hook_DomainRegisterStringA)},
                          {NVTX_CBID_CORE2_DomainRegisterStringW, as_entry(hook_DomainRegisterStringW)}});
    if (!core && !core2) {
      log_message("NVTX gave no function tables; NVTX ranges are not recorded for this module");
      return 0;
    }
    return 1;
  } catch (...) {
    return 0;
  }
}
