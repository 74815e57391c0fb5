// The XML reader (JUnit input): attributes, entities, CDATA, comments; errors with their offset.
#include <gtest/gtest.h>

#include "junit/xml.h"
#include "util/error.h"

using namespace pfx::gates;

TEST(Xml, ParsesAttributesEntitiesCdataAndComments) {
  const auto root = parse_xml(
      "<?xml version=\"1.0\"?>\n<!-- c --><a x=\"1 &lt; 2\" y='q'><b>t&amp;u&#65;&#x42;</b><![CDATA[<raw>]]><c/></a>", "t.xml");
  EXPECT_EQ(root->name, "a");
  EXPECT_EQ(root->attr("x"), "1 < 2");
  EXPECT_EQ(root->attr("y"), "q");
  ASSERT_NE(root->child("b"), nullptr);
  EXPECT_EQ(root->child("b")->text, "t&uAB");
  EXPECT_EQ(root->text, "<raw>");
  EXPECT_NE(root->child("c"), nullptr);
}

TEST(Xml, ErrorsNameOriginAndOffset) {
  try {
    parse_xml("<a><b></a>", "bad.xml");
    FAIL();
  } catch (const pfx::Error& e) {
    EXPECT_NE(std::string(e.what()).find("bad.xml: offset"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("</a> does not match <b>"), std::string::npos);
  }
  EXPECT_THROW(parse_xml("<a x=1/>", "bad.xml"), pfx::Error);
  EXPECT_THROW(parse_xml("<a>&bogus;</a>", "bad.xml"), pfx::Error);
  EXPECT_EQ(xml_escape("<\"&'>"), "&lt;&quot;&amp;&apos;&gt;");
}
