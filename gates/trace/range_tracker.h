// The NVTX range stacks of every thread, and the attribution of kernel launches to them.
//
// The injection library calls push/pop/start/end from its NVTX hooks and launch() from the CUPTI
// launch callback; each call appends an event that is later written to the journal. Rules:
//  - push/pop ranges nest per thread; pop(domain) closes the most recent push range of that domain
//    on that thread (NVTX keeps one push/pop stack per domain and thread).
//  - a start/end range joins the stack of the thread that started it (so kernels that thread
//    launches count for it) and leaves it when ended, from any thread, in any order.
//  - a range's parent is the innermost range open on its thread when it opened.
//  - a launch is attributed to the innermost range open on the launching thread at launch time;
//    its full stack is that range's parent chain.
// Plain C++ (no CUDA) so the rules are unit-tested on CPU. Thread-safe: one mutex, held briefly.
#pragma once
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <variant>
#include <vector>

#include "trace/trace_model.h"

namespace pfx::trace {

struct RangeBeginEvent {
  RangeId id = kNoRange;
  std::string domain;
  std::string name;
  RangeKind kind = RangeKind::push_pop;
  std::uint32_t thread = 0;
  RangeId parent = kNoRange;
  std::uint64_t ts = 0;
  Payload payload;
  bool operator==(const RangeBeginEvent&) const = default;
};

struct RangeEndEvent {
  RangeId id = kNoRange;
  std::uint32_t thread = 0;  // the thread that ended it (may differ from the one that started it)
  std::uint64_t ts = 0;
  bool operator==(const RangeEndEvent&) const = default;
};

struct LaunchEvent {
  std::uint32_t correlation_id = 0;
  std::uint32_t thread = 0;
  RangeId range = kNoRange;
  const char* api = nullptr;  // static-lifetime name of the launching API (CUPTI's), may be null
};

using TrackerEvent = std::variant<RangeBeginEvent, RangeEndEvent, LaunchEvent>;

class RangeTracker {
 public:
  // Returns the 0-based depth of the new range among push ranges of `domain` on `thread`.
  int push(std::uint32_t thread, std::string_view domain, std::string_view name, const Payload& payload,
           std::uint64_t ts);
  // Returns the depth of the closed range, or -1 when `thread` has no open push range of `domain`.
  int pop(std::uint32_t thread, std::string_view domain, std::uint64_t ts);
  RangeId start(std::uint32_t thread, std::string_view domain, std::string_view name, const Payload& payload,
                std::uint64_t ts);
  // False when `id` is not an open start/end range (already ended, or never started).
  bool end(RangeId id, std::uint32_t thread, std::uint64_t ts);

  RangeId innermost(std::uint32_t thread) const;
  void launch(std::uint32_t correlation_id, std::uint32_t thread, const char* api);

  // Moves out the events recorded since the last call, in the order they happened.
  std::vector<TrackerEvent> take_events();
  std::uint64_t unmatched_ends() const;

 private:
  struct OpenRange {
    RangeId id;
    std::string domain;
    RangeKind kind;
  };
  RangeId open(std::uint32_t thread, std::string_view domain, std::string_view name, const Payload& payload,
               std::uint64_t ts, RangeKind kind);

  mutable std::mutex mutex_;
  std::unordered_map<std::uint32_t, std::vector<OpenRange>> stacks_;  // thread -> open ranges, oldest first
  std::unordered_map<RangeId, std::uint32_t> open_start_end_;         // start/end id -> thread holding it
  RangeId next_id_ = 1;
  std::vector<TrackerEvent> events_;
  std::uint64_t unmatched_ends_ = 0;
};

}  // namespace pfx::trace
