// Per-thread NVTX range stacks and launch attribution (rules in range_tracker.h).
#include "trace/range_tracker.h"

#include <algorithm>

namespace pfx::trace {

RangeId RangeTracker::open(std::uint32_t thread, std::string_view domain, std::string_view name,
                           const Payload& payload, std::uint64_t ts, RangeKind kind) {
  // Caller holds mutex_.
  std::vector<OpenRange>& stack = stacks_[thread];
  RangeId id = next_id_++;
  RangeBeginEvent begin;
  begin.id = id;
  begin.domain = std::string(domain);
  begin.name = std::string(name);
  begin.kind = kind;
  begin.thread = thread;
  begin.parent = stack.empty() ? kNoRange : stack.back().id;
  begin.ts = ts;
  begin.payload = payload;
  events_.emplace_back(std::move(begin));
  stack.push_back(OpenRange{id, std::string(domain), kind});
  return id;
}

int RangeTracker::push(std::uint32_t thread, std::string_view domain, std::string_view name,
                       const Payload& payload, std::uint64_t ts) {
  std::lock_guard lock(mutex_);
  const std::vector<OpenRange>& stack = stacks_[thread];
  int depth = static_cast<int>(std::count_if(stack.begin(), stack.end(), [&](const OpenRange& r) {
    return r.kind == RangeKind::push_pop && r.domain == domain;
  }));
  open(thread, domain, name, payload, ts, RangeKind::push_pop);
  return depth;
}

int RangeTracker::pop(std::uint32_t thread, std::string_view domain, std::uint64_t ts) {
  std::lock_guard lock(mutex_);
  auto found = stacks_.find(thread);
  if (found == stacks_.end()) {
    ++unmatched_ends_;
    return -1;
  }
  std::vector<OpenRange>& stack = found->second;
  // The most recent push range of this domain; start/end ranges opened after it stay open.
  auto it = std::find_if(stack.rbegin(), stack.rend(), [&](const OpenRange& r) {
    return r.kind == RangeKind::push_pop && r.domain == domain;
  });
  if (it == stack.rend()) {
    ++unmatched_ends_;
    return -1;
  }
  auto erase_at = std::prev(it.base());
  int depth = static_cast<int>(std::count_if(stack.begin(), erase_at, [&](const OpenRange& r) {
    return r.kind == RangeKind::push_pop && r.domain == domain;
  }));
  events_.emplace_back(RangeEndEvent{erase_at->id, thread, ts});
  stack.erase(erase_at);
  return depth;
}

RangeId RangeTracker::start(std::uint32_t thread, std::string_view domain, std::string_view name,
                            const Payload& payload, std::uint64_t ts) {
  std::lock_guard lock(mutex_);
  RangeId id = open(thread, domain, name, payload, ts, RangeKind::start_end);
  open_start_end_[id] = thread;
  return id;
}

bool RangeTracker::end(RangeId id, std::uint32_t thread, std::uint64_t ts) {
  std::lock_guard lock(mutex_);
  auto owner = open_start_end_.find(id);
  if (owner == open_start_end_.end()) {
    ++unmatched_ends_;
    return false;
  }
  std::vector<OpenRange>& stack = stacks_[owner->second];
  auto it = std::find_if(stack.begin(), stack.end(), [&](const OpenRange& r) { return r.id == id; });
  if (it != stack.end()) stack.erase(it);
  open_start_end_.erase(owner);
  events_.emplace_back(RangeEndEvent{id, thread, ts});
  return true;
}

RangeId RangeTracker::innermost(std::uint32_t thread) const {
  std::lock_guard lock(mutex_);
  auto found = stacks_.find(thread);
  if (found == stacks_.end() || found->second.empty()) return kNoRange;
  return found->second.back().id;
}

void RangeTracker::launch(std::uint32_t correlation_id, std::uint32_t thread, const char* api) {
  std::lock_guard lock(mutex_);
  auto found = stacks_.find(thread);
  RangeId range = (found == stacks_.end() || found->second.empty()) ? kNoRange : found->second.back().id;
  events_.emplace_back(LaunchEvent{correlation_id, thread, range, api});
}

std::vector<TrackerEvent> RangeTracker::take_events() {
  std::lock_guard lock(mutex_);
  std::vector<TrackerEvent> out;
  out.swap(events_);
  return out;
}

std::uint64_t RangeTracker::unmatched_ends() const {
  std::lock_guard lock(mutex_);
  return unmatched_ends_;
}

}  // namespace pfx::trace
