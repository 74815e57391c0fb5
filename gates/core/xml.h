// A small XML reader for the one XML format the gates consume: JUnit test reports (CTest's
// --output-junit). Elements, attributes, text, CDATA, comments, processing instructions and the
// predefined and numeric character entities; no DTDs or namespaces. Errors name the origin and
// the byte offset.
#pragma once
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace pfx::gates {

struct XmlElement {
  std::string name;
  std::map<std::string, std::string> attrs;
  std::vector<std::unique_ptr<XmlElement>> children;
  std::string text;  // concatenated character data directly inside this element

  std::string attr(const std::string& key, const std::string& dflt = "") const;
  const XmlElement* child(const std::string& name) const;
};

std::unique_ptr<XmlElement> parse_xml(const std::string& text, const std::string& origin);
std::string xml_escape(const std::string& s);

}  // namespace pfx::gates
