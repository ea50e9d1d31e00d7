// The man page generator (packaging/manpage.cpp): every visible command and
// option of a CLI11 tree in the page, hidden ones left out, roff escaped.
#include "packaging/manpage.h"

#include <gtest/gtest.h>

namespace gpuraid::man {
namespace {

struct Tool {
  CLI::App app{"tool: does things to drives", "tool"};
  std::string level = "6", name, secret;
  std::vector<std::string> drives;
  bool force = false;
  Tool() {
    app.add_option("--socket", name, "the daemon's socket");
    auto* dg = app.add_subcommand("dg", "drive groups");
    auto* create = dg->add_subcommand("create", "create a group");
    create->add_option("drives", drives, "member drives")->required();
    create->add_option("--level", level, "RAID level")->capture_default_str()->check(CLI::IsMember({"5", "6", "ec"}));
    create->add_flag("--force", force, "overwrite drives that hold data");
    create->add_option("--secret", secret, "not for people")->group("");
    app.add_subcommand("manpage", "hidden")->group("");
  }
};

std::string page_of(const CLI::App& app) {
  Page p;
  p.name = "tool";
  p.source = "tool 1.0";
  p.sections.push_back({"EXIT STATUS", tagged_list({{"0", "done"}, {"2", "bad command line"}})});
  return render(app, p);
}

TEST(ManPage, HasTheStandardSectionsInOrder) {
  Tool t;
  const std::string s = page_of(t.app);
  EXPECT_NE(s.find(".TH TOOL 8 \"\" \"tool 1.0\""), std::string::npos) << s;
  EXPECT_NE(s.find(".SH NAME\ntool \\- does things to drives\n"), std::string::npos) << s;
  size_t last = 0;
  for (const char* sec : {".SH SYNOPSIS", ".SH OPTIONS", ".SH COMMANDS", ".SH \"EXIT STATUS\""}) {
    size_t at = s.find(sec);
    ASSERT_NE(at, std::string::npos) << sec << "\n" << s;
    EXPECT_GT(at, last) << sec;
    last = at;
  }
  EXPECT_NE(s.find(".TP\n\\fB2\\fR\nbad command line\n"), std::string::npos) << s;
}

TEST(ManPage, ListsEveryVisibleCommandWithItsArgumentsAndOptions) {
  Tool t;
  const std::string s = page_of(t.app);
  EXPECT_NE(s.find(".SS \"tool dg COMMAND\"\ndrive groups\n"), std::string::npos) << s;
  EXPECT_NE(s.find(".SS \"tool dg create DRIVES... [OPTIONS]\"\ncreate a group\n"), std::string::npos) << s;
  EXPECT_NE(s.find("\\fB\\-\\-level\\fR \\fI{5,6,ec}\\fR\nRAID level (default: 6)"), std::string::npos) << s;
  EXPECT_NE(s.find("\\fB\\-\\-force\\fR\noverwrite drives that hold data"), std::string::npos) << s;
  EXPECT_NE(s.find("\\fB\\-\\-socket\\fR \\fITEXT\\fR\nthe daemon's socket"), std::string::npos) << s;
}

TEST(ManPage, LeavesHiddenCommandsAndOptionsOut) {
  Tool t;
  const std::string s = page_of(t.app);
  EXPECT_EQ(s.find("manpage"), std::string::npos) << s;
  EXPECT_EQ(s.find("secret"), std::string::npos) << s;
}

TEST(ManPage, EscapesWhatRoffWouldReadAsRequests) {
  EXPECT_EQ(escape(".hidden request"), "\\&.hidden request");
  EXPECT_EQ(escape("a\n'quote"), "a\n\\&'quote");
  EXPECT_EQ(escape("C:\\path --flag"), "C:\\epath \\-\\-flag");
}

}  // namespace
}  // namespace gpuraid::man
