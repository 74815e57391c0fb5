// XML reading on pugixml (Debian libpugixml-dev), into the XmlElement tree the JUnit reader walks
// (see xml.h). pugixml leaves an undefined entity as text; this reader rejects it, as an XML
// parser must.
#include "junit/xml.h"

#include <pugixml.hpp>

#include <cctype>
#include <cstring>

#include "util/error.h"
#include "util/escape.h"

namespace pfx::gates {

namespace {

// Offset of the first '&' in character data or an attribute that starts no predefined or numeric
// character reference, or npos. Comments, CDATA sections and processing instructions are skipped.
size_t undefined_entity(const std::string& s) {
  for (size_t i = 0; i < s.size(); ++i) {
    for (const auto& [open, close] : {std::pair<const char*, const char*>{"<!--", "-->"}, {"<![CDATA[", "]]>"}, {"<?", "?>"}}) {
      if (s.compare(i, std::strlen(open), open) == 0) {
        const size_t end = s.find(close, i);
        i = end == std::string::npos ? s.size() : end + std::strlen(close);
        break;
      }
    }
    if (i >= s.size() || s[i] != '&') continue;
    const size_t semi = s.find(';', i);
    if (semi == std::string::npos) return i;
    const std::string name = s.substr(i + 1, semi - i - 1);
    if (name == "amp" || name == "lt" || name == "gt" || name == "quot" || name == "apos") continue;
    const bool hex = name.size() > 2 && name[0] == '#' && (name[1] == 'x' || name[1] == 'X');
    const bool dec = name.size() > 1 && name[0] == '#' && !hex;
    bool digits = hex || dec;
    for (size_t k = hex ? 2 : 1; digits && k < name.size(); ++k)
      digits = hex ? std::isxdigit(static_cast<unsigned char>(name[k])) != 0 : std::isdigit(static_cast<unsigned char>(name[k])) != 0;
    if (!digits) return i;
  }
  return std::string::npos;
}

// "</a> does not match <b>": the closing tag at `offset` and the element still open in the
// partial document.
std::string mismatch_text(const std::string& s, size_t offset, const pugi::xml_document& doc) {
  size_t end = offset;
  while (end < s.size() && s[end] != '>' && !std::isspace(static_cast<unsigned char>(s[end]))) ++end;
  pugi::xml_node open = doc;
  for (pugi::xml_node c = open.last_child(); c && c.type() == pugi::node_element; c = c.last_child()) open = c;
  return "</" + s.substr(offset, end - offset) + "> does not match <" + open.name() + ">";
}

std::unique_ptr<XmlElement> convert(const pugi::xml_node& node) {
  auto el = std::make_unique<XmlElement>();
  el->name = node.name();
  for (const auto& a : node.attributes()) el->attrs[a.name()] = a.value();
  for (const auto& c : node.children()) {
    if (c.type() == pugi::node_element) el->children.push_back(convert(c));
    else if (c.type() == pugi::node_pcdata || c.type() == pugi::node_cdata) el->text += c.value();
  }
  return el;
}

}  // namespace

std::string XmlElement::attr(const std::string& key, const std::string& dflt) const {
  auto it = attrs.find(key);
  return it == attrs.end() ? dflt : it->second;
}

const XmlElement* XmlElement::child(const std::string& n) const {
  for (const auto& c : children)
    if (c->name == n) return c.get();
  return nullptr;
}

std::unique_ptr<XmlElement> parse_xml(const std::string& text, const std::string& origin) {
  pugi::xml_document doc;
  const auto result = doc.load_buffer(text.data(), text.size(), pugi::parse_default | pugi::parse_ws_pcdata_single);
  if (!result) {
    const size_t offset = static_cast<size_t>(result.offset);
    fail(origin, ": offset ", offset, ": ",
         result.status == pugi::status_end_element_mismatch ? mismatch_text(text, offset, doc) : std::string(result.description()));
  }
  if (const size_t at = undefined_entity(text); at != std::string::npos)
    fail(origin, ": offset ", at, ": undefined entity (expected &amp; &lt; &gt; &quot; &apos; or a numeric reference)");
  const pugi::xml_node root = doc.document_element();
  if (!root) fail(origin, ": no root element");
  return convert(root);
}

std::string xml_escape(const std::string& raw) {
  // Untrusted text (candidate output, names from model files): terminal controls, C1, bidi
  // overrides and invalid UTF-8 become visible escapes first (util/escape.h).
  const std::string s = escape_control(raw);
  std::string out;
  for (unsigned char c : s) {
    switch (c) {
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default:
        if (c < 0x20 && c != '\n' && c != '\t' && c != '\r') out += '?';  // not representable in XML 1.0
        else out += static_cast<char>(c);
    }
  }
  return out;
}

}  // namespace pfx::gates
