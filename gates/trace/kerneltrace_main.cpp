// `kerneltrace`: the standalone form of `landing trace` (same arguments; see trace_cli.h).
#include "trace/trace_cli.h"

int main(int argc, char** argv) { return pfx::trace::trace_main(argc, argv); }
