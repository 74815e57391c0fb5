// Recursive-descent XML reader (see xml.h).
#include "core/xml.h"

#include <cctype>

#include "util/error.h"
#include "util/escape.h"

namespace pfx::gates {

std::string XmlElement::attr(const std::string& key, const std::string& dflt) const {
  auto it = attrs.find(key);
  return it == attrs.end() ? dflt : it->second;
}

const XmlElement* XmlElement::child(const std::string& n) const {
  for (const auto& c : children)
    if (c->name == n) return c.get();
  return nullptr;
}

namespace {

class Parser {
 public:
  Parser(const std::string& t, const std::string& origin) : s_(t), origin_(origin) {}

  std::unique_ptr<XmlElement> document() {
    skip_misc();
    if (pos_ >= s_.size() || s_[pos_] != '<') error("expected the root element");
    auto root = element();
    skip_misc();
    if (pos_ != s_.size()) error("content after the root element");
    return root;
  }

 private:
  [[noreturn]] void error(const std::string& what) const { fail(origin_, ": offset ", pos_, ": ", what); }
  bool starts(const char* p) const { return s_.compare(pos_, std::char_traits<char>::length(p), p) == 0; }
  void skip_ws() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\n' || s_[pos_] == '\r' || s_[pos_] == '\t')) ++pos_;
  }
  void skip_until(const char* end) {
    const auto e = s_.find(end, pos_);
    if (e == std::string::npos) error(std::string("unterminated construct, expected '") + end + "'");
    pos_ = e + std::char_traits<char>::length(end);
  }
  void skip_misc() {
    for (;;) {
      skip_ws();
      if (starts("<?")) skip_until("?>");
      else if (starts("<!--")) skip_until("-->");
      else if (starts("<!DOCTYPE")) skip_until(">");
      else return;
    }
  }
  std::string name() {
    const size_t b = pos_;
    while (pos_ < s_.size()) {
      const char c = s_[pos_];
      if (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.' || c == ':') ++pos_;
      else break;
    }
    if (b == pos_) error("expected a name");
    return s_.substr(b, pos_ - b);
  }
  std::string decode(const std::string& raw) {
    std::string out;
    for (size_t i = 0; i < raw.size(); ++i) {
      if (raw[i] != '&') {
        out += raw[i];
        continue;
      }
      const auto semi = raw.find(';', i);
      if (semi == std::string::npos) error("unterminated entity");
      const std::string ent = raw.substr(i + 1, semi - i - 1);
      if (ent == "lt") out += '<';
      else if (ent == "gt") out += '>';
      else if (ent == "amp") out += '&';
      else if (ent == "quot") out += '"';
      else if (ent == "apos") out += '\'';
      else if (!ent.empty() && ent[0] == '#') {
        unsigned long cp = 0;
        try {
          cp = (ent.size() > 1 && (ent[1] == 'x' || ent[1] == 'X')) ? std::stoul(ent.substr(2), nullptr, 16)
                                                                    : std::stoul(ent.substr(1));
        } catch (...) {
          error("bad character reference &" + ent + ";");
        }
        // UTF-8 encode
        if (cp < 0x80) out += static_cast<char>(cp);
        else if (cp < 0x800) { out += static_cast<char>(0xC0 | (cp >> 6)); out += static_cast<char>(0x80 | (cp & 0x3F)); }
        else if (cp < 0x10000) { out += static_cast<char>(0xE0 | (cp >> 12)); out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F)); out += static_cast<char>(0x80 | (cp & 0x3F)); }
        else { out += static_cast<char>(0xF0 | (cp >> 18)); out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F)); out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F)); out += static_cast<char>(0x80 | (cp & 0x3F)); }
      } else {
        error("unknown entity &" + ent + ";");
      }
      i = semi;
    }
    return out;
  }
  std::unique_ptr<XmlElement> element() {
    ++pos_;  // '<'
    auto el = std::make_unique<XmlElement>();
    el->name = name();
    for (;;) {
      skip_ws();
      if (pos_ >= s_.size()) error("unterminated start tag <" + el->name + ">");
      if (starts("/>")) {
        pos_ += 2;
        return el;
      }
      if (s_[pos_] == '>') {
        ++pos_;
        break;
      }
      const std::string key = name();
      skip_ws();
      if (pos_ >= s_.size() || s_[pos_] != '=') error("expected '=' after attribute " + key);
      ++pos_;
      skip_ws();
      if (pos_ >= s_.size() || (s_[pos_] != '"' && s_[pos_] != '\'')) error("expected a quoted value for " + key);
      const char q = s_[pos_++];
      const auto e = s_.find(q, pos_);
      if (e == std::string::npos) error("unterminated attribute value for " + key);
      el->attrs[key] = decode(s_.substr(pos_, e - pos_));
      pos_ = e + 1;
    }
    for (;;) {
      if (pos_ >= s_.size()) error("element <" + el->name + "> is not closed");
      if (starts("</")) {
        pos_ += 2;
        const std::string n = name();
        if (n != el->name) error("closing tag </" + n + "> does not match <" + el->name + ">");
        skip_ws();
        if (pos_ >= s_.size() || s_[pos_] != '>') error("expected '>'");
        ++pos_;
        return el;
      }
      if (starts("<!--")) { skip_until("-->"); continue; }
      if (starts("<?")) { skip_until("?>"); continue; }
      if (starts("<![CDATA[")) {
        pos_ += 9;
        const auto e = s_.find("]]>", pos_);
        if (e == std::string::npos) error("unterminated CDATA section");
        el->text += s_.substr(pos_, e - pos_);
        pos_ = e + 3;
        continue;
      }
      if (s_[pos_] == '<') {
        el->children.push_back(element());
        continue;
      }
      const auto e = s_.find('<', pos_);
      el->text += decode(s_.substr(pos_, (e == std::string::npos ? s_.size() : e) - pos_));
      pos_ = e == std::string::npos ? s_.size() : e;
    }
  }

  const std::string& s_;
  std::string origin_;
  size_t pos_ = 0;
};

}  // namespace

std::unique_ptr<XmlElement> parse_xml(const std::string& text, const std::string& origin) {
  return Parser(text, origin).document();
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
