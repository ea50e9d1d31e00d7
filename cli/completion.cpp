#include "cli/completion.h"

#include <cstdio>
#include <functional>
#include <memory>

namespace gpuraid::cli {

namespace {

bool hidden(const CLI::App* a) { return a->get_group().empty(); }

// "--level" for an option with long names; its value set ("0 1 10 5 6 ec")
// when a CLI::IsMember check gives one; whether it takes a value at all.
struct Opt {
  std::string name, values;
  bool takes_value = false;
};

std::vector<Opt> options_of(const CLI::App* a) {
  std::vector<Opt> out;
  for (const CLI::Option* o : a->get_options()) {
    if (o->get_lnames().empty() || o->get_group().empty()) continue;
    Opt x;
    x.name = "--" + o->get_lnames().front();
    x.takes_value = o->get_type_size() != 0;
    // IsMember describes itself as "{a,b,c}" within the type name.
    const std::string t = o->get_type_name();
    size_t open = t.find('{'), close = t.find('}', open);
    if (open != std::string::npos && close != std::string::npos) {
      x.values = t.substr(open + 1, close - open - 1);
      for (auto& ch : x.values) ch = ch == ',' ? ' ' : ch;
    }
    out.push_back(x);
  }
  return out;
}

std::string join_names(const std::vector<Opt>& v) {
  std::string s;
  for (const auto& o : v) s += (s.empty() ? "" : " ") + o.name;
  return s;
}

}  // namespace

std::string bash_completion(const CLI::App& app) {
  const std::string prog = app.get_name();
  const std::string fn = "_" + prog + "_complete";
  const std::vector<Opt> globals = options_of(&app);
  std::string paths, levels, values;
  std::function<void(const CLI::App*, const std::string&)> walk = [&](const CLI::App* a, const std::string& path) {
    std::string cmds;
    for (const CLI::App* sub : a->get_subcommands([](const CLI::App* x) { return !hidden(x); })) {
      cmds += (cmds.empty() ? "" : " ") + sub->get_name();
      paths += (paths.empty() ? "" : "|") + std::string("\"") + path + "/" + sub->get_name() + "\"";
      walk(sub, path + "/" + sub->get_name());
    }
    std::vector<Opt> opts = options_of(a);
    if (a != &app) opts.insert(opts.end(), globals.begin(), globals.end());  // global options go anywhere
    levels += "    \"" + path + "\") cmds=\"" + cmds + "\"; opts=\"" + join_names(opts) + "\" ;;\n";
    for (const auto& o : options_of(a))
      if (o.takes_value)
        values += "    \"" + path + " " + o.name + "\"" + (a == &app ? "|*\" " + o.name + "\"" : "") + ") " +
                  (o.values.empty() ? "return ;;  # a path, a size, a name: bash's default\n"
                                    : "COMPREPLY=($(compgen -W \"" + o.values + "\" -- \"$cur\")); return ;;\n");
  };
  walk(&app, "");
  std::string s;
  s += "# bash completion for " + prog + ", generated from its command definitions by `" + prog +
       " completion bash`.\n# Load it with: source <(" + prog + " completion bash)\n";
  s += fn + "() {\n";
  s += "  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} path= w i cmds= opts=\n";
  s += "  COMPREPLY=()\n";
  s += "  # The command path so far: each word that names a subcommand of the path before it.\n";
  s += "  for ((i = 1; i < COMP_CWORD; i++)); do\n    w=${COMP_WORDS[i]}\n    case \"$path/$w\" in\n      " + paths +
       ") path=$path/$w ;;\n    esac\n  done\n";
  s += "  case \"$path $prev\" in\n" + values + "  esac\n";
  s += "  case \"$path\" in\n" + levels + "  esac\n";
  s += "  if [[ $cur == -* ]]; then\n    COMPREPLY=($(compgen -W \"$opts\" -- \"$cur\"))\n  else\n"
       "    COMPREPLY=($(compgen -W \"$cmds\" -- \"$cur\"))\n  fi\n}\n";
  s += "complete -o default -F " + fn + " " + prog + "\n";
  return s;
}

void add_completion_command(Cli& c) {
  auto shell = std::make_shared<std::string>();
  auto* s = c.app.add_subcommand("completion", "print a shell completion script: source <(gpuraid completion bash)");
  s->add_option("shell", *shell, "the shell")->required()->check(CLI::IsMember({"bash"}));
  s->callback([&c, shell] {
    c.action = [&c](Client&) {
      printf("%s", bash_completion(c.app).c_str());
      return int(kOk);
    };
  });
}

}  // namespace gpuraid::cli
