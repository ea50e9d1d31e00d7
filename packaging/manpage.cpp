#include "packaging/manpage.h"

#include <cctype>
#include <functional>

namespace gpuraid::man {

namespace {

bool hidden(const CLI::App* a) { return a->get_group().empty(); }
bool hidden(const CLI::Option* o) { return o->get_group().empty(); }

std::string upper(std::string s) {
  for (auto& c : s) c = char(toupper(static_cast<unsigned char>(c)));
  return s;
}

// The app's description without a leading "name: " (both programs say so).
std::string summary(const CLI::App& app, const std::string& name) {
  std::string d = app.get_description();
  if (d.rfind(name + ": ", 0) == 0) d = d.substr(name.size() + 2);
  return d;
}

// What the option takes, as its --help shows it: "{a,b,c}" for a value set,
// a named validator's word (SIZE), else CLI11's type word (TEXT, UINT...).
std::string value_word(const CLI::Option* o) {
  std::string t = o->get_type_name();
  size_t open = t.find('{'), close = t.find('}', open);
  if (open != std::string::npos && close != std::string::npos) return t.substr(open, close - open + 1);
  // "TEXT:SIZE": a named validator's word says more than the type's.
  size_t colon = t.rfind(':');
  if (colon == std::string::npos) return t;
  std::string named = t.substr(colon + 1);
  return !named.empty() && named.find(' ') == std::string::npos ? named : t.substr(0, t.find(':'));
}

std::string option_tag(const CLI::Option* o) {
  std::string tag;
  for (const auto& s : o->get_snames()) tag += (tag.empty() ? "" : ", ") + std::string("\\fB\\-") + s + "\\fR";
  for (const auto& l : o->get_lnames()) tag += (tag.empty() ? "" : ", ") + std::string("\\fB\\-\\-") + escape(l) + "\\fR";
  // A flag has no type word (CLI11's type size is not 0 for every flag).
  if (const std::string w = value_word(o); !w.empty()) tag += " \\fI" + escape(w) + "\\fR";
  if (o->get_items_expected_max() > 1 || o->get_expected_max() > 1) tag += " ...";
  return tag;
}

std::string option_text(const CLI::Option* o) {
  std::string t = escape(o->get_description());
  if (!o->get_default_str().empty()) t += " (default: " + escape(o->get_default_str()) + ")";
  if (o->get_required()) t += " (required)";
  if (o->get_expected_max() > 1 || o->get_items_expected_max() > 1) t += " (repeatable)";
  return t;
}

// "gpuraid pd add" from the subcommand itself.
std::string command_path(const CLI::App* a) {
  std::string p;
  for (; a; a = a->get_parent()) p = a->get_name() + (p.empty() ? "" : " " + p);
  return p;
}

void options_list(const CLI::App* a, std::string* out) {
  for (const CLI::Option* o : a->get_options()) {
    if (hidden(o) || !o->nonpositional()) continue;
    *out += ".TP\n" + option_tag(o) + "\n" + option_text(o) + "\n";
  }
}

void command(const CLI::App* a, std::string* out) {
  std::string usage = command_path(a);
  std::string args;
  for (const CLI::Option* o : a->get_options()) {
    if (hidden(o) || o->nonpositional()) continue;
    std::string w = upper(o->get_name());
    if (o->get_expected_max() > 1 || o->get_items_expected_max() > 1) w += "...";
    usage += " " + (o->get_required() ? w : "[" + w + "]");
    args += ".TP\n\\fI" + escape(upper(o->get_name())) + "\\fR\n" + escape(o->get_description()) + "\n";
  }
  bool has_options = false;
  for (const CLI::Option* o : a->get_options()) has_options |= !hidden(o) && o->nonpositional() && o->get_name() != "--help";
  auto subs = a->get_subcommands([](const CLI::App* x) { return !hidden(x); });
  if (!subs.empty()) usage += " COMMAND";
  if (has_options) usage += " [OPTIONS]";
  *out += ".SS \"" + escape(usage) + "\"\n" + escape(a->get_description()) + "\n";
  // Subcommands inherit their parent's footer: print a footer of its own only.
  if (!a->get_footer().empty() && a->get_footer() != a->get_parent()->get_footer())
    *out += ".PP\n" + escape(a->get_footer()) + "\n";
  if (!args.empty() || has_options) {
    *out += ".RS\n" + args;
    for (const CLI::Option* o : a->get_options())
      if (!hidden(o) && o->nonpositional() && o->get_name() != "--help")
        *out += ".TP\n" + option_tag(o) + "\n" + option_text(o) + "\n";
    *out += ".RE\n";
  }
  for (const CLI::App* s : subs) command(s, out);
}

}  // namespace

std::string escape(const std::string& text) {
  std::string out;
  bool line_start = true;
  for (char c : text) {
    if (line_start && (c == '.' || c == '\'')) out += "\\&";
    if (c == '\\') out += "\\e";
    else if (c == '-') out += "\\-";
    else out += c;
    line_start = c == '\n';
  }
  return out;
}

std::string tagged_list(const std::vector<std::pair<std::string, std::string>>& items) {
  std::string s;
  for (const auto& [tag, text] : items) s += ".TP\n\\fB" + escape(tag) + "\\fR\n" + escape(text) + "\n";
  return s;
}

std::string render(const CLI::App& app, const Page& p) {
  std::string s = ".\\\" Generated from " + escape(p.name) + "'s command definitions at build time: do not edit.\n";
  s += ".TH " + upper(p.name) + " " + p.section + " \"\" \"" + escape(p.source) + "\" \"System Administration\"\n";
  s += ".SH NAME\n" + escape(p.name) + " \\- " + escape(summary(app, p.name)) + "\n";
  s += ".SH SYNOPSIS\n" + (p.synopsis.empty() ? "\\fB" + escape(p.name) + "\\fR [\\fIOPTIONS\\fR]" : p.synopsis) + "\n";
  if (!p.description.empty()) s += ".SH DESCRIPTION\n" + p.description + "\n";
  s += ".SH OPTIONS\n";
  options_list(&app, &s);
  auto subs = app.get_subcommands([](const CLI::App* x) { return !hidden(x); });
  if (!subs.empty()) {
    s += ".SH COMMANDS\n";
    for (const CLI::App* sub : subs) command(sub, &s);
  }
  for (const auto& sec : p.sections) s += ".SH \"" + sec.title + "\"\n" + sec.roff + "\n";
  return s;
}

}  // namespace gpuraid::man
