// Test helper: loads what tests/engine/gguf/gguf_py_dump.py wrote (gguf-py's view of a GGUF
// file: metadata, tensor table, dequantized tensors) and compares float arrays bit for bit.
#pragma once
#include <gtest/gtest.h>

#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "engine/gguf/python_runner.h"
#include "gguf/gguf.h"
#include "util/npy.h"

namespace pfx::test {

struct PyTensor {
  std::string name;
  uint32_t type = 0;
  std::vector<int64_t> shape;
  int64_t n_elements = 0;
  int64_t n_bytes = 0;
  uint64_t data_offset = 0;                  // absolute
  std::optional<std::filesystem::path> npy;  // gguf-py's dequantization, when it has one
};

struct PyDump {
  uint32_t version = 0;
  uint64_t alignment = 0;
  uint64_t data_offset = 0;
  nlohmann::json fields;  // [{key, types: ["ARRAY","STRING"], value}]
  std::vector<PyTensor> tensors;
};

// Runs gguf_py_dump.py on `gguf` into `outdir`; on failure returns nullopt and sets *error.
inline std::optional<PyDump> gguf_py_dump(const std::filesystem::path& gguf, const std::filesystem::path& outdir,
                                          std::string* error) {
  if (std::string problem = python_gguf_problem(); !problem.empty()) {
    *error = problem;
    return std::nullopt;
  }
  const ProcessResult r = run_python("engine/gguf/gguf_py_dump.py", {gguf.string(), outdir.string()});
  if (r.exit_code != 0) {
    *error = "gguf_py_dump.py " + gguf.string() + " failed (exit " + std::to_string(r.exit_code) + "):\n" + r.output;
    return std::nullopt;
  }
  std::ifstream in(outdir / "meta.json");
  const nlohmann::json j = nlohmann::json::parse(in);
  PyDump d;
  d.version = j.at("version").get<uint32_t>();
  d.alignment = j.at("alignment").get<uint64_t>();
  d.data_offset = j.at("data_offset").get<uint64_t>();
  d.fields = j.at("fields");
  for (const auto& t : j.at("tensors")) {
    PyTensor pt;
    pt.name = t.at("name").get<std::string>();
    pt.type = t.at("type_id").get<uint32_t>();
    pt.shape = t.at("shape").get<std::vector<int64_t>>();
    pt.n_elements = t.at("n_elements").get<int64_t>();
    pt.n_bytes = t.at("n_bytes").get<int64_t>();
    pt.data_offset = t.at("data_offset").get<uint64_t>();
    if (!t.at("npy").is_null()) pt.npy = outdir / t.at("npy").get<std::string>();
    d.tensors.push_back(std::move(pt));
  }
  return d;
}

inline uint32_t bits_of(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

// Empty if `got` equals `want` bit for bit (two NaNs count as equal when nan_payload_free: a
// hardware half→float conversion may quiet a signaling NaN); else a description of the first
// mismatches and the count.
inline std::string bitwise_diff(const std::vector<float>& want, const float* got, int64_t n,
                                bool nan_payload_free = false) {
  if (static_cast<int64_t>(want.size()) != n) {
    return "size mismatch: expected " + std::to_string(want.size()) + " values, got " + std::to_string(n);
  }
  int64_t mismatches = 0;
  std::ostringstream os;
  for (int64_t i = 0; i < n; ++i) {
    const uint32_t a = bits_of(want[static_cast<size_t>(i)]), b = bits_of(got[i]);
    if (a == b) continue;
    if (nan_payload_free && std::isnan(want[static_cast<size_t>(i)]) && std::isnan(got[i])) continue;
    if (mismatches < 5) {
      os << "  [" << i << "] expected " << want[static_cast<size_t>(i)] << " (0x" << std::hex << a << ") got "
         << got[i] << " (0x" << b << std::dec << ")\n";
    }
    ++mismatches;
  }
  if (mismatches == 0) return {};
  return std::to_string(mismatches) + " of " + std::to_string(n) + " values differ:\n" + os.str();
}


inline std::string upper(std::string_view s) {
  std::string u(s);
  for (char& c : u) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return u;
}

// Checks one of our metadata values against gguf-py's JSON view of it (types and contents;
// gguf-py flattens nested arrays, so those are checked by type only).
inline void expect_value_matches(const std::string& key, const pfx::gguf::Value& v, const nlohmann::json& field) {
  using pfx::gguf::ValueType;
  const auto types = field.at("types").get<std::vector<std::string>>();
  ASSERT_FALSE(types.empty()) << key;
  ASSERT_EQ(upper(pfx::gguf::value_type_name(v.type)), types[0]) << key;
  const nlohmann::json& want = field.at("value");
  switch (v.type) {
    case ValueType::STRING: EXPECT_EQ(v.str, want.get<std::string>()) << key; break;
    case ValueType::BOOL: EXPECT_EQ(v.u != 0, want.get<bool>()) << key; break;
    case ValueType::FLOAT32:
    case ValueType::FLOAT64: EXPECT_EQ(v.f, want.get<double>()) << key; break;
    case ValueType::UINT8:
    case ValueType::UINT16:
    case ValueType::UINT32:
    case ValueType::UINT64: EXPECT_EQ(v.u, want.get<uint64_t>()) << key; break;
    case ValueType::INT8:
    case ValueType::INT16:
    case ValueType::INT32:
    case ValueType::INT64: EXPECT_EQ(v.i, want.get<int64_t>()) << key; break;
    case ValueType::ARRAY: {
      ASSERT_GE(types.size(), 2u) << key;
      ASSERT_EQ(upper(pfx::gguf::value_type_name(v.array_type)), types[1]) << key;
      if (v.array_type == ValueType::ARRAY) break;
      ASSERT_TRUE(want.is_array()) << key;
      ASSERT_EQ(v.array_size(), want.size()) << key;
      for (size_t k = 0; k < want.size(); ++k) {
        const nlohmann::json& w = want[k];
        switch (v.array_type) {
          case ValueType::STRING: ASSERT_EQ(v.strings[k], w.get<std::string>()) << key << "[" << k << "]"; break;
          case ValueType::BOOL: ASSERT_EQ(v.raw[k] != 0, w.get<bool>()) << key << "[" << k << "]"; break;
          default: {
            // Compare through the raw little-endian element.
            const size_t es = pfx::gguf::value_type_size(v.array_type);
            uint64_t u = 0;
            std::memcpy(&u, v.raw.data() + k * es, es);
            if (v.array_type == ValueType::FLOAT32) {
              float f; std::memcpy(&f, &u, 4);
              ASSERT_EQ(static_cast<double>(f), w.get<double>()) << key << "[" << k << "]";
            } else if (v.array_type == ValueType::FLOAT64) {
              double f; std::memcpy(&f, &u, 8);
              ASSERT_EQ(f, w.get<double>()) << key << "[" << k << "]";
            } else if (w.is_number_unsigned()) {
              ASSERT_EQ(u, w.get<uint64_t>()) << key << "[" << k << "]";
            } else {
              const int shift = static_cast<int>(64 - 8 * es);  // sign-extend the element
              const int64_t i = static_cast<int64_t>(u << shift) >> shift;
              ASSERT_EQ(i, w.get<int64_t>()) << key << "[" << k << "]";
            }
          }
        }
      }
      break;
    }
  }
}

}  // namespace pfx::test
