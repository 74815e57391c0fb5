// A landing record with every gate filled the way the gates fill them (test input for the report
// writers; the numbers are made up for the format tests, shaped like the seed's r39 record), and
// what the report tests do with it.
#pragma once
#include <filesystem>
#include <string>

#include "report/landing_record.h"

pfx::gates::LandingRecord sample_record();

// Appends `rec` to the ledger at `dir` as candidate abcdef0's next report (ids abcdef0,
// abcdef0-2, ...), written and indexed as `landing run` does.
void append_to_ledger(const std::filesystem::path& dir, pfx::gates::LandingRecord rec);

// A test failure for each thing that would make an HTML page load from outside itself (links
// to http:// or https://, <link>, src=): reports open offline, from a file.
void expect_self_contained(const std::string& html);
