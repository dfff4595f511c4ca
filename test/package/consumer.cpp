// A program that uses locksmith as an outside project does, built by test/package/consume.sh
// through find_package and through FetchContent: it takes a lock on the server it is given,
// releases it, and exits 0.
//
// Run:    consumer redis://127.0.0.1:6379
#include <locksmith/locksmith.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>

#include <exception>
#include <iostream>

namespace asio = boost::asio;
using namespace std::chrono_literals;

int main(int argc, char** argv)
{
   if (argc != 2) {
      std::cerr << "usage: consumer REDIS_URL\n";
      return 64;
   }
   asio::io_context ioc;
   locksmith::client locks{ioc.get_executor(), {.nodes = {argv[1]}}};
   int status = 1;
   auto lock_once = [&]() -> asio::awaitable<void> {
      auto lease = co_await locks.async_lock("package/consumer", {.ttl = 10s, .wait = 5s});
      std::cout << "locked, fencing token " << lease.fencing_token() << '\n';
      co_await locks.async_unlock(lease);
      std::cout << "unlocked\n";
   };
   asio::co_spawn(ioc, lock_once(), [&](std::exception_ptr e) {
      try {
         if (e)
            std::rethrow_exception(e);
         status = 0;
      } catch (std::exception const& x) {
         std::cerr << "consumer: " << x.what() << '\n';
      }
      locks.async_close(asio::detached);
   });
   ioc.run();
   return status;
}
