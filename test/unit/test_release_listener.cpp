// Unit tests of the release listener (src/engines/release_listener.hpp): when a subscription counts
// as confirmed, and which pushes wake the sleepers. Pushes are fed by hand; no sockets.
#include "engines/release_listener.hpp"

#include "sansio/set_scripts.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/test/unit_test.hpp>

#include <string>
#include <utility>
#include <vector>

namespace test_release_listener {

namespace {
using locksmith::detail::push_event;
using locksmith::detail::release_listener;
using kind = push_event::kind;

struct fixture {
   boost::asio::io_context ioc;
   std::vector<std::pair<std::size_t, std::string>> sent;  // node, "+channel" or "-channel"
   release_listener l;

   explicit fixture(std::size_t nodes,
                    std::chrono::milliseconds linger = std::chrono::milliseconds{0},
                    std::size_t max_lingering = 1024, std::string tag = {})
       : l{ioc.get_executor(),
           nodes,
           {[this](std::size_t i, std::string const& c) { sent.emplace_back(i, "+" + c); },
            [this](std::size_t i, std::string const& c) { sent.emplace_back(i, "-" + c); }},
           tag,
           linger,
           max_lingering}
   {}

   void ack(std::size_t node, kind k, std::string const& c = "ch", std::string payload = {})
   {
      l.on_push(node, {k, c, std::move(payload)});
   }
};

}  // namespace

BOOST_AUTO_TEST_SUITE(release_listener_tests)

BOOST_AUTO_TEST_CASE(confirmed_on_a_quorum_of_nodes)
{
   fixture f{5};
   f.l.acquire("ch");
   f.l.acquire("ch");  // a second reference sends nothing
   BOOST_TEST(f.sent.size() == 5u);
   BOOST_TEST(!f.l.confirmed("ch"));
   f.ack(0, kind::subscribed);
   f.ack(3, kind::subscribed);
   BOOST_TEST(!f.l.confirmed("ch"));
   auto const before = f.l.events("ch");
   f.ack(4, kind::subscribed);
   BOOST_TEST(f.l.confirmed("ch"));
   BOOST_TEST(f.l.events("ch") == before + 1);  // becoming confirmed is an event
   f.ack(1, kind::subscribed);
   BOOST_TEST(f.l.events("ch") == before + 1);  // staying confirmed is not
}

BOOST_AUTO_TEST_CASE(a_late_confirmation_of_an_earlier_subscribe_does_not_count)
{
   fixture f{1};
   f.l.acquire("ch");
   f.l.release("ch");
   f.l.acquire("ch");  // SUBSCRIBE, UNSUBSCRIBE, SUBSCRIBE on their way
   BOOST_TEST(f.sent.size() == 3u);
   f.ack(0, kind::subscribed);
   BOOST_TEST(!f.l.confirmed("ch"));  // the server unsubscribes next
   f.ack(0, kind::unsubscribed);
   BOOST_TEST(!f.l.confirmed("ch"));
   f.ack(0, kind::subscribed);
   BOOST_TEST(f.l.confirmed("ch"));
}

BOOST_AUTO_TEST_CASE(messages_and_new_connections_wake_the_sleepers)
{
   fixture f{1};
   auto& ioc = f.ioc;
   f.l.acquire("ch");
   f.ack(0, kind::subscribed);
   boost::asio::steady_timer t{ioc, std::chrono::hours{1}};
   bool woken = false;
   f.l.add_sleeper("ch", &t);
   t.async_wait([&](auto ec) { woken = ec == boost::asio::error::operation_aborted; });
   auto const e0 = f.l.events("ch");
   f.ack(0, kind::message);
   BOOST_TEST(f.l.events("ch") == e0 + 1);
   ioc.run_for(std::chrono::seconds{1});
   BOOST_TEST(woken);

   // A new subscriber connection: the node's subscription is being restored, and a release may
   // have been missed. Unconfirmed until the restore's confirmation, and an event at once.
   f.ack(0, kind::connected, "");
   BOOST_TEST(f.l.events("ch") == e0 + 2);
   BOOST_TEST(!f.l.confirmed("ch"));
   f.ack(0, kind::subscribed);
   BOOST_TEST(f.l.confirmed("ch"));
   f.l.remove_sleeper("ch", &t);
}

BOOST_AUTO_TEST_CASE(an_idle_channel_is_forgotten_once_its_unsubscribe_is_confirmed)
{
   fixture f{2};
   f.l.acquire("ch");
   f.ack(0, kind::subscribed);
   f.ack(1, kind::subscribed);
   f.ack(0, kind::message);
   BOOST_TEST(f.l.events("ch") > 0u);
   f.l.release("ch");
   BOOST_TEST(!f.l.confirmed("ch"));
   f.ack(0, kind::unsubscribed);
   BOOST_TEST(f.l.events("ch") > 0u);  // node 1 has not confirmed yet: still tracked
   f.ack(1, kind::unsubscribed);
   BOOST_TEST(f.l.events("ch") == 0u);  // forgotten
   f.ack(0, kind::message);             // a late message on a forgotten channel: ignored
   BOOST_TEST(f.l.events("ch") == 0u);
   f.l.release("ch");  // an extra release: harmless
   BOOST_TEST(f.sent.size() == 4u);
}

// A release under RedLock publishes its token on every node: one event, however many messages.
BOOST_AUTO_TEST_CASE(one_release_is_one_event_on_every_node)
{
   fixture f{5};
   f.l.acquire("ch");
   for (std::size_t i = 0; i < 5; ++i)
      f.ack(i, kind::subscribed);
   auto const e0 = f.l.events("ch");
   for (std::size_t i = 0; i < 5; ++i)
      f.ack(i, kind::message, "ch", "token-1");
   BOOST_TEST(f.l.events("ch") == e0 + 1);
   f.ack(2, kind::message, "ch", "token-2");
   f.ack(0, kind::message, "ch", "token-1");  // a straggler of the first release
   f.ack(4, kind::message, "ch", "token-2");
   BOOST_TEST(f.l.events("ch") == e0 + 2);
}

// A fair release hands the key to one waiter and names it: only that waiter's process counts
// the message, so the other processes' waiters sleep on (no herd).
BOOST_AUTO_TEST_CASE(a_handoff_wakes_only_the_process_that_awaits_its_token)
{
   fixture f{1};
   f.l.acquire("ch");
   f.ack(0, kind::subscribed);
   auto const before = f.l.events("ch");
   std::string const to_other = std::string{locksmith::detail::handoff_prefix} + "other";
   std::string const to_us = std::string{locksmith::detail::handoff_prefix} + "ours";
   f.ack(0, kind::message, "ch", to_other);
   BOOST_TEST(f.l.events("ch") == before);
   f.l.await_handoff("ours");
   f.ack(0, kind::message, "ch", to_other);
   BOOST_TEST(f.l.events("ch") == before);
   f.ack(0, kind::message, "ch", to_us);
   BOOST_TEST(f.l.events("ch") == before + 1);
   f.ack(0, kind::message, "ch", "a-token");  // a release with nobody queued wakes everyone
   BOOST_TEST(f.l.events("ch") == before + 2);
   f.l.forget_handoff("ours");
   f.ack(0, kind::message, "ch", std::string{locksmith::detail::handoff_prefix} + "ours2");
   BOOST_TEST(f.l.events("ch") == before + 2);
}

BOOST_AUTO_TEST_CASE(an_unreferenced_channel_lingers_subscribed_then_goes)
{
   fixture f{1, std::chrono::milliseconds{20}};
   f.l.acquire("ch");
   f.ack(0, kind::subscribed);
   f.l.release("ch");
   BOOST_TEST(f.sent.size() == 1u);  // no UNSUBSCRIBE yet
   BOOST_TEST(f.l.lingering() == 1u);
   f.l.acquire("ch");  // contended again: still subscribed and confirmed, nothing sent
   BOOST_TEST(f.sent.size() == 1u);
   BOOST_TEST(f.l.confirmed("ch"));
   f.l.release("ch");
   // The sweep unsubscribes once the linger has passed (the timer; bounded wait, not a sleep).
   for (int i = 0; i < 200 && f.sent.size() < 2; ++i)
      f.ioc.run_one_for(std::chrono::milliseconds{10});
   BOOST_TEST_REQUIRE(f.sent.size() == 2u);
   BOOST_TEST(f.sent.back().second == "-ch");
   f.ack(0, kind::unsubscribed);
   BOOST_TEST(f.l.events("ch") == 0u);  // forgotten
}

BOOST_AUTO_TEST_CASE(at_most_max_lingering_channels_linger)
{
   fixture f{1, std::chrono::hours{1}, 2};
   for (auto const* c : {"a", "b", "c"}) {
      f.l.acquire(c);
      f.l.release(c);
   }
   BOOST_TEST(f.l.lingering() == 2u);
   BOOST_TEST(f.sent.back().second == "-a");  // the oldest went first
   f.l.wake_all();
}

// With a tag, each channel has a twin of the process's own ("ch:t"), subscribed first, where a
// release publishes the message that names one of its waiters: it counts as the channel's.
BOOST_AUTO_TEST_CASE(a_tagged_channel_has_a_twin_that_counts_as_its_own)
{
   fixture f{3, std::chrono::milliseconds{0}, 1024, "t"};
   f.l.acquire("ch");
   using sent_t = std::vector<std::pair<std::size_t, std::string>>;
   BOOST_TEST(
      (f.sent ==
       sent_t{{0, "+ch:t"}, {0, "+ch"}, {1, "+ch:t"}, {1, "+ch"}, {2, "+ch:t"}, {2, "+ch"}}));
   auto const e0 = f.l.events("ch");
   // Both confirmed on one node, the name's alone on another: no quorum of nodes yet.
   f.ack(0, kind::subscribed, "ch:t");
   f.ack(0, kind::subscribed, "ch");
   f.ack(1, kind::subscribed, "ch");
   BOOST_TEST(!f.l.confirmed("ch"));
   BOOST_TEST(!f.l.subscribed("ch"));
   f.ack(1, kind::subscribed, "ch:t");  // the twin completes the quorum: an event
   BOOST_TEST(f.l.confirmed("ch"));
   BOOST_TEST(f.l.events("ch") == e0 + 1);

   // A waiter of ours named on the twin wakes the channel's sleepers; one of another process's
   // tag ("ch:u") is not ours and is not heard here.
   f.l.await_handoff("w:t");
   f.ack(0, kind::message, "ch:t", std::string{locksmith::detail::handoff_prefix} + "w:t");
   BOOST_TEST(f.l.events("ch") == e0 + 2);
   f.ack(0, kind::message, "ch:u", std::string{locksmith::detail::handoff_prefix} + "w:t");
   BOOST_TEST(f.l.events("ch") == e0 + 2);

   // Given back: both unsubscribed, and forgotten once every node confirmed both.
   f.ack(2, kind::subscribed, "ch:t");
   f.ack(2, kind::subscribed, "ch");
   f.sent.clear();
   f.l.release("ch");
   BOOST_TEST(f.sent.size() == 6u);
   BOOST_TEST(f.sent[0].second == "-ch:t");
   for (std::size_t i = 0; i < 3; ++i)
      f.ack(i, kind::unsubscribed, "ch");
   BOOST_TEST(f.l.events("ch") > 0u);  // the twin's confirmations are still to come
   for (std::size_t i = 0; i < 3; ++i)
      f.ack(i, kind::unsubscribed, "ch:t");
   BOOST_TEST(f.l.events("ch") == 0u);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace test_release_listener
