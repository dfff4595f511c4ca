// The ACL recipes of docs/operations.md ("ACL recipes"), read from that page itself, so that the
// tests run exactly what the documentation tells users to run (issue 24: the documented line
// switched the restart quarantine off, and no test used it; issue 28: one recipe per use).
#pragma once

#include "support/redis_server.hpp"
#include "support/server_version.hpp"

#include <boost/test/unit_test.hpp>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace locksmith::test {

// The recipes, by the bold label that introduces each on the page.
inline constexpr char const* recipe_lock = "The lock";
inline constexpr char const* recipe_primitives = "Every primitive";
inline constexpr char const* recipe_sentinel = "Sentinel";
inline constexpr char const* recipe_cluster = "Redis Cluster";
inline constexpr char const* recipe_inspecting = "Inspecting";
inline constexpr char const* recipe_wait_replicas = "`config::wait_replicas`";
inline constexpr char const* recipe_database = "A database other than 0";

// docs/operations.md's whole text.
inline std::string operations_text()
{
   std::ifstream in{LOCKSMITH_OPERATIONS_PATH};
   BOOST_REQUIRE_MESSAGE(in, "cannot read " LOCKSMITH_OPERATIONS_PATH);
   std::stringstream all;
   all << in.rdbuf();
   return all.str();
}

// The rules of one recipe: the `ACL SETUSER locker ...` line (and its indented continuation lines)
// of the first code block after `**label**`, with `>PASSWORD` made `>password`: what `ACL SETUSER
// name` or a `--user name` server argument takes. Channel rules (`resetchannels`, `&pattern`) came
// with Redis 6.2: on an older server they are dropped, as the page says.
inline std::vector<std::string> acl_recipe(std::string const& label, std::string const& password)
{
   auto const text = operations_text();
   auto const at = text.find("\n**" + label + "**");
   BOOST_REQUIRE_MESSAGE(at != std::string::npos, "operations.md has no recipe " << label);
   auto const line_at = text.find("\nACL SETUSER locker ", at);
   BOOST_REQUIRE_MESSAGE(line_at != std::string::npos && line_at < text.find("\n**", at + 1),
                         "the recipe " << label << " has no ACL SETUSER locker line");
   std::istringstream lines{text.substr(line_at + 1)};
   std::vector<std::string> rules;
   std::string line;
   for (bool first = true; std::getline(lines, line) && (first || line.starts_with(" "));
        first = false) {
      std::istringstream words{line};
      for (std::string w; words >> w;)
         rules.push_back(w == ">PASSWORD" ? ">" + password : w);
   }
   BOOST_REQUIRE(rules.size() > 3 && rules[0] == "ACL" && rules[2] == "locker");
   rules.erase(rules.begin(), rules.begin() + 3);
   if (acl_channels("locksmith:*").empty())
      std::erase_if(
         rules, [](std::string const& r) { return r == "resetchannels" || r.starts_with("&"); });
   return rules;
}

// The first recipe and the named others, in order: the user a reader of the page would make for
// those uses.
inline std::vector<std::string> acl_rules(std::string const& password,
                                          std::vector<std::string> const& more = {})
{
   auto rules = acl_recipe(recipe_lock, password);
   for (auto const& label : more) {
      auto const r = acl_recipe(label, password);
      rules.insert(rules.end(), r.begin(), r.end());
   }
   return rules;
}

// What the server's ACL LOG holds, one "user: reason object;" per denial; empty when nothing
// was denied.
inline std::string acl_denials(redis_server& s)
{
   std::string out;
   for (auto const& entry : s.command({"ACL", "LOG"}).elements) {
      std::string user, what;
      for (std::size_t i = 0; i + 1 < entry.elements.size(); i += 2) {
         auto const& field = entry.elements[i].str;
         if (field == "username")
            user = entry.elements[i + 1].str;
         else if (field == "reason" || field == "object")
            what += " " + entry.elements[i + 1].str;
      }
      out += user + ":" + what + "; ";
   }
   return out;
}

// `--user user rules...`: a redis_server argument list that creates the user at each start, so
// that a server restarted empty has it again.
inline std::vector<std::string> user_args(std::string const& user,
                                          std::vector<std::string> const& rules)
{
   std::vector<std::string> args{"--user", user};
   args.insert(args.end(), rules.begin(), rules.end());
   return args;
}

}  // namespace locksmith::test
