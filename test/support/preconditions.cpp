#include "support/preconditions.hpp"

#include "support/redis_server.hpp"

namespace locksmith::test {

boost::unit_test::precondition needs_redis_server()
{
   return boost::unit_test::precondition{[](boost::unit_test::test_unit_id) {
      if (find_redis_server())
         return boost::test_tools::assertion_result{true};
      boost::test_tools::assertion_result r{false};
      r.message() << "redis-server is not in PATH, and the integration tests start their own "
                     "(Debian: apt install redis-server)";
      return r;
   }};
}

}  // namespace locksmith::test
