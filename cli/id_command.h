// A subcommand that takes one id (a PD's, a VD's), sends it as a Ref to one
// RPC and prints the answer: the JSON document with --json, else what
// say(answer, id) prints. Shared by `pd show|remove|fail` and
// `vd show|delete|unexport`.
#pragma once
#include <memory>
#include <string>

#include "cli/cli.h"
#include "cli/output.h"

namespace gpuraid::cli {

template <typename Ref, typename Resp, typename M, typename Say>
void add_id_command(Cli& c, CLI::App* parent, const char* name, const char* help, const char* id_name,
                    const char* id_help, M rpc, Say say) {
  auto id = std::make_shared<std::string>();
  auto* s = parent->add_subcommand(name, help);
  s->add_option(id_name, *id, id_help)->required();
  s->callback([&c, id, rpc, say] {
    c.action = [&c, id, rpc, say](Client& cl) {
      Ref q;
      q.set_id(*id);
      Resp r;
      if (int rc = cl.call(rpc, q, &r)) return rc;
      if (c.g.json) print_json(r);
      else say(r, *id);
      return int(kOk);
    };
  });
}

}  // namespace gpuraid::cli
