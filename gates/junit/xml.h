// XML for the one XML format the gates consume, JUnit test reports (CTest's --output-junit):
// parsed by pugixml (Debian libpugixml-dev) into a small element tree (name, attributes, child
// elements, the character data and CDATA directly inside). Undefined entities are an error, as in
// any conforming parser. Errors name the origin and the byte offset. Plus escaping for the XML
// and HTML the reports write.
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
