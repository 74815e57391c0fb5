// The ids landing forms paths from (reports/<id>/, .landing/build/<id>, results/<id>/), checked
// before any path is formed: an id read from an imported file or typed on the command line is
// untrusted, and "../../x" must never leave the reports folder.
//   candidate / baseline id: a commit's hex SHA (7-40 digits; landing writes 12), or for an
//                            uncommitted tree "<sha>-wt-<hex hash of the change>"
//   report id:               a candidate id, plus "-N" (N ≥ 2) for a rerun of the same candidate
// Nothing else: no '/', no '.', no upper case, no spaces.
#pragma once
#include <string>
#include <string_view>

namespace pfx::gates {

bool is_candidate_id(std::string_view id);
bool is_report_id(std::string_view id);

// Throw pfx::Error "<where>: <what> '<id>' is not a valid id (expected ...)" unless valid.
void require_candidate_id(std::string_view id, std::string_view where, std::string_view what = "id");
void require_report_id(std::string_view id, std::string_view where, std::string_view what = "report id");

}  // namespace pfx::gates
