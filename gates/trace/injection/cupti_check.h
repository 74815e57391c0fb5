// KT_CUPTI_CHECK(call): runs a CUPTI call; on failure prints "kerneltrace: file:line: call -> NAME
// (description)" to stderr and evaluates to false. Never throws or aborts: a tracer must not take
// down the program it traces, so each caller decides what to give up when a call fails.
#pragma once
#include <cupti.h>

namespace pfx::trace::injection {

bool cupti_succeeded(CUptiResult result, const char* call_text, const char* file, int line);

}  // namespace pfx::trace::injection

#define KT_CUPTI_CHECK(call) (::pfx::trace::injection::cupti_succeeded((call), #call, __FILE__, __LINE__))
