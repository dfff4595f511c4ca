// Unit tests of reentrant_holds (src/engines/reentrant_holds.hpp): which owner holds a name by a
// reentrant lease not ended yet, over lease states of a stub owner (no client, no node).
#include "engines/reentrant_holds.hpp"

#include "engines/lease_owner.hpp"
#include "engines/telemetry.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <memory>
#include <string>

namespace test_reentrant_holds {

namespace {

namespace asio = boost::asio;
using namespace locksmith::detail;
using status = lease_state::status;

struct stub_owner final : lease_owner {
   asio::io_context io;
   asio::any_io_executor ex = io.get_executor();
   telemetry tel;

   asio::any_io_executor const& executor() const noexcept override { return ex; }
   telemetry& observer() noexcept override { return tel; }
   void leave_slot(std::string const&) noexcept override {}
};

// A reentrant hold of `name` by `owner`.
std::shared_ptr<lease_state> hold(std::shared_ptr<lease_owner> const& o, std::string name,
                                  std::string owner)
{
   auto const now = lease_state::clock::now();
   auto st =
      std::make_shared<lease_state>(o, std::move(name), "token", 0, now,
                                    now + std::chrono::seconds{30}, locksmith::lock_options{});
   st->kind = lease_kind{lease_kind::of::reentrant, 1, std::move(owner)};
   return st;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(reentrant_holds_tests)

BOOST_AUTO_TEST_CASE(an_owner_holds_a_name_while_one_of_its_leases_is_held)
{
   auto const o = std::make_shared<stub_owner>();
   reentrant_holds holds;
   BOOST_TEST(!holds.held_by("a", "req-1"));
   auto first = hold(o, "a", "req-1");
   auto second = hold(o, "a", "req-1");
   holds.add("a", first);
   holds.add("a", second);
   BOOST_TEST(holds.held_by("a", "req-1"));
   BOOST_TEST(!holds.held_by("a", "req-2"));  // another owner queues as anyone would
   BOOST_TEST(!holds.held_by("b", "req-1"));  // and so does the owner, for another name

   first->st = status::released;
   BOOST_TEST(holds.held_by("a", "req-1"));  // the second hold is still there
   second->st = status::lost;
   BOOST_TEST(!holds.held_by("a", "req-1"));
   BOOST_TEST(holds.size() == 0u);  // the name is forgotten with its last hold
}

BOOST_AUTO_TEST_CASE(a_hold_ends_with_its_lease)
{
   auto const o = std::make_shared<stub_owner>();
   reentrant_holds holds;
   auto other = hold(o, "a", "req-2");
   holds.add("a", other);
   {
      auto gone = hold(o, "a", "req-1");
      holds.add("a", gone);
      BOOST_TEST(holds.held_by("a", "req-1"));
   }
   BOOST_TEST(!holds.held_by("a", "req-1"));
   BOOST_TEST(holds.held_by("a", "req-2"));
   BOOST_TEST(holds.size() == 1u);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace test_reentrant_holds
