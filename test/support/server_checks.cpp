#include "support/server_checks.hpp"

#include "support/server_version.hpp"

#include <iostream>

namespace locksmith::test {
namespace {

// Why a server older than major.minor cannot run a test; empty when it can (or is unknown: the
// test then runs and says for itself what failed).
std::string older_reason(int major, int minor, std::string const& what)
{
   auto const v = redis_server_version();
   if (!v || *v >= server_version{major, minor, 0})
      return {};
   return "needs Redis " + std::to_string(major) + "." + std::to_string(minor) + " or later (" +
          what + "); the server is " + redis_server_name();
}

}  // namespace

boost::unit_test::precondition needs_server_version(int major, int minor, std::string what)
{
   return boost::unit_test::precondition{[=](boost::unit_test::test_unit_id) {
      auto const why = older_reason(major, minor, what);
      boost::test_tools::assertion_result r{why.empty()};
      r.message() << why;
      return r;
   }};
}

boost::unit_test::precondition needs_cluster_server()
{
   return needs_server_version(7, 0, "Redis Cluster: its releases publish with SPUBLISH");
}

bool server_older_than(int major, int minor, std::string const& what)
{
   auto const why = older_reason(major, minor, what);
   if (why.empty())
      return false;
   // Printed whatever the log level: a skipped check must not look like a passed one.
   std::cout << boost::unit_test::framework::current_test_case().full_name() << ": skipped, " << why
             << std::endl;
   return true;
}

}  // namespace locksmith::test
