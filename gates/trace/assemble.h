// Journal -> trace: joins kernel records to their launch (correlation id -> launching thread and
// innermost NVTX range), closes ranges, numbers range occurrences, totals memcpy/memset, and applies
// the range filter recorded in the journal's options.
//
// Range filter (name F, skip K): a range is in scope when it, or a range in its parent chain, is
// named F and is F's occurrence K or later (occurrences count every range named F, any thread or
// domain, in the order they opened). Kernels and transfers are kept when their launch range is in
// scope; ranges are kept when in scope, and a kept range whose parent is out of scope becomes a root.
#pragma once
#include "trace/journal.h"
#include "trace/trace_model.h"

namespace pfx::trace {

Trace assemble_trace(const JournalContents& journal);

}  // namespace pfx::trace
