// The README's ACL line for the lock's user, read from README.md itself, so that the tests run
// exactly what the README tells users to run (issue 24: the documented line switched the restart
// quarantine off, and no test used it).
#pragma once

#include "support/server_version.hpp"

#include <boost/test/unit_test.hpp>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace locksmith::test {

// What the README adds for the CLI's plain `exec`, a read-write lock's writer.
inline std::vector<std::string> const readme_exec_extras{"+zremrangebyscore", "+zcard", "+zrange"};

// The README's whole text.
inline std::string readme_text()
{
   std::ifstream in{LOCKSMITH_README_PATH};
   BOOST_REQUIRE_MESSAGE(in, "cannot read " LOCKSMITH_README_PATH);
   std::stringstream all;
   all << in.rdbuf();
   return all.str();
}

// The rules of the README's `ACL SETUSER locker ...` line and its continuation lines, with
// `>PASSWORD` made `>password`: what `ACL SETUSER name` or a `--user name` server argument
// takes. With `exec_extras`, the three commands that the README
// says the CLI's plain exec needs besides (checked to be in the README as it says them).
inline std::vector<std::string> readme_acl_rules(std::string const& password,
                                                 bool exec_extras = false)
{
   auto const text = readme_text();
   auto const at = text.find("\nACL SETUSER locker ");
   BOOST_REQUIRE_MESSAGE(at != std::string::npos, "the README has no ACL SETUSER locker line");
   std::istringstream lines{text.substr(at + 1)};
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
   // Channel rules (`resetchannels`, `&pattern`) came with Redis 6.2: an older server takes the
   // rest of the line (its users may use every channel).
   if (acl_channels("locksmith:*").empty())
      std::erase_if(
         rules, [](std::string const& r) { return r == "resetchannels" || r.starts_with("&"); });
   if (exec_extras) {
      std::string quoted = "`";
      for (auto const& c : readme_exec_extras)
         quoted += (quoted.size() > 1 ? " " : "") + c;
      BOOST_REQUIRE_MESSAGE(text.find(quoted + "`") != std::string::npos,
                            "the README no longer names " << quoted << "`");
      rules.insert(rules.end(), readme_exec_extras.begin(), readme_exec_extras.end());
   }
   return rules;
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
