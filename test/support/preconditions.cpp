#include "support/preconditions.hpp"

#include "support/redis_server.hpp"

#include <string>

namespace locksmith::test {

boost::unit_test::precondition needs_redis_server()
{
   // A capturing lambda: GCC 12 warns that boost::function copies an empty one's uninitialised
   // bytes.
   std::string why = "redis-server is not in PATH, and the integration tests start their own "
                     "(Debian: apt install redis-server)";
   return boost::unit_test::precondition{[why = std::move(why)](boost::unit_test::test_unit_id) {
      if (find_redis_server())
         return boost::test_tools::assertion_result{true};
      boost::test_tools::assertion_result r{false};
      r.message() << why;
      return r;
   }};
}

}  // namespace locksmith::test
