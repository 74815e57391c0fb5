// Vocab validation: sizes, unique pieces, special ids and byte-token spelling (see vocab.h).
#include "tokenizer/vocab.h"

#include <limits>
#include <unordered_map>

#include "tokenizer/byte_piece.h"
#include "util/error.h"

namespace pfx::tok {
namespace {

void check_special_id(int32_t id, size_t n, std::string_view origin, std::string_view name) {
  if (id < -1 || (id >= 0 && static_cast<size_t>(id) >= n)) {
    fail(origin, ": ", name, " token id ", id, " is outside the vocab (", n,
         " pieces); expected -1 (none) or 0..", n - 1);
  }
}

}  // namespace

void normalize_and_validate(Vocab& v, std::string_view origin) {
  const size_t n = v.pieces.size();
  if (n == 0) fail(origin, ": the vocab has no pieces; expected at least one");
  if (n > static_cast<size_t>(std::numeric_limits<int32_t>::max())) {
    fail(origin, ": ", n, " pieces do not fit int32 token ids");
  }
  if (!v.scores.empty() && v.scores.size() != n) {
    fail(origin, ": ", v.scores.size(), " scores for ", n, " pieces; expected one per piece");
  }
  if (!v.types.empty() && v.types.size() != n) {
    fail(origin, ": ", v.types.size(), " token types for ", n, " pieces; expected one per piece");
  }
  std::unordered_map<std::string_view, size_t> seen;
  seen.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    if (v.pieces[i].empty()) v.pieces[i] = "[EMPTY_" + std::to_string(i) + "]";
  }
  for (size_t i = 0; i < n; ++i) {
    auto [it, inserted] = seen.emplace(v.pieces[i], i);
    if (!inserted) {
      fail(origin, ": piece '", v.pieces[i], "' appears at ids ", it->second, " and ", i,
           "; expected unique pieces");
    }
    if (!v.types.empty() && v.types[i] == kByte && parse_byte_piece(v.pieces[i]) < 0) {
      fail(origin, ": token ", i, " '", v.pieces[i],
           "' has type byte; expected a piece spelled <0xHH>");
    }
  }
  check_special_id(v.bos, n, origin, "BOS");
  check_special_id(v.eos, n, origin, "EOS");
  check_special_id(v.unk, n, origin, "UNK");
  check_special_id(v.pad, n, origin, "PAD");
  check_special_id(v.eot, n, origin, "EOT");
  if (v.kind == VocabKind::Bpe && v.merges.empty()) fail(origin, ": a BPE vocab needs merges; it has none");
  if (v.add_bos && v.bos < 0) fail(origin, ": add_bos is set but there is no BOS token id");
  if (v.add_eos && v.eos < 0) fail(origin, ": add_eos is set but there is no EOS token id");
}

}  // namespace pfx::tok
