#include "support/fixture.hpp"

#include <exception>

namespace locksmith::test {

void expect_no_work_left(boost::asio::io_context& ioc, std::chrono::steady_clock::duration deadline)
{
   ioc.restart();
   auto const until = std::chrono::steady_clock::now() + deadline;
   std::size_t handlers = 0;
   try {
      while (!ioc.stopped() && std::chrono::steady_clock::now() < until)
         handlers += ioc.run_one_until(until);
   } catch (std::exception const& e) {
      BOOST_ERROR("a handler threw after the test: " << e.what());
      return;
   }
   auto const ms = std::chrono::duration_cast<std::chrono::milliseconds>(deadline).count();
   BOOST_CHECK_MESSAGE(ioc.stopped(), "work was left on the io_context after the test: still busy "
                                         << ms << " ms later, after " << handlers << " handlers");
}

void load_scripts(redis_server& s)
{
   using namespace locksmith::detail;
   for (auto const* sc : all_scripts())
      BOOST_REQUIRE(s.text({"SCRIPT", "LOAD", sc->text}) == sc->sha1);
}

boost::asio::awaitable<bool> server_fixture::key_disappears(std::string const& key,
                                                            std::chrono::milliseconds deadline)
{
   auto const until = std::chrono::steady_clock::now() + deadline;
   while (std::chrono::steady_clock::now() < until) {
      if (srv.text({"EXISTS", key}) == "0")
         co_return true;
      co_await sleep(std::chrono::milliseconds{1});
   }
   co_return false;
}

}  // namespace locksmith::test
