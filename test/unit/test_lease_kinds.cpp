// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
// Unit tests of the kinds of lease (detail/lease_kind.hpp): the permit quorum
// (sansio/quorum.hpp), each kind's script calls and quorum (src/protocol/kind_calls.hpp), the
// verdicts under a quorum other than the majority, and the scripts' reply shapes (set_scripts.hpp).
#include "protocol/kind_calls.hpp"
#include "protocol/verdicts.hpp"

#include "sansio/keys.hpp"
#include "sansio/quorum.hpp"
#include "sansio/set_scripts.hpp"

#include <boost/test/unit_test.hpp>

#include <chrono>
#include <string>
#include <vector>

namespace test_lease_kinds {

namespace {
using namespace std::chrono_literals;
using namespace locksmith::detail;
using of = lease_kind::of;

// The definition: the least q for which permits + 1 holders of q nodes each cannot fit in the
// n × permits places, capped at n.
std::size_t reference_permit_quorum(std::size_t n, std::size_t permits)
{
   std::size_t q = 1;
   while (q < n && (permits + 1) * q <= n * permits)
      ++q;
   return q;
}

std::vector<std::string> keys_of(std::shared_ptr<script_call const> const& c)
{
   auto const keys = c->keys();
   return {keys.begin(), keys.end()};
}

std::vector<std::string> args_of(std::shared_ptr<script_call const> const& c)
{
   auto const args = c->args();
   return {args.begin(), args.end()};
}

}  // namespace

BOOST_AUTO_TEST_SUITE(lease_kinds)

BOOST_AUTO_TEST_CASE(permit_quorum_follows_its_definition)
{
   for (std::size_t n = 1; n <= 9; ++n)
      for (std::size_t p = 1; p <= 12; ++p)
         BOOST_TEST(permit_quorum(n, p) == reference_permit_quorum(n, p), "n " << n << " p " << p);
   BOOST_TEST(permit_quorum(5, 1) == quorum_of(5));
   BOOST_TEST(permit_quorum(5, 3) == 4u);
   BOOST_TEST(permit_quorum(5, 4) == 5u);
   BOOST_TEST(permit_quorum(1, 1000) == 1u);
   BOOST_TEST(permit_quorum(7, std::size_t(-1)) == 7u);  // no overflow
}

BOOST_AUTO_TEST_CASE(a_vote_counter_wins_at_the_quorum_it_was_given)
{
   vote_counter v{5, 4};
   for (int i = 0; i < 3; ++i)
      BOOST_TEST((v.record(true) == outcome::pending));
   BOOST_TEST((v.record(true) == outcome::won));
   vote_counter lost{5, 4};
   BOOST_TEST((lost.record(false) == outcome::pending));
   BOOST_TEST((lost.record(false) == outcome::lost));  // two no votes leave at most 3 yes
   BOOST_TEST(vote_counter{5}.quorum() == 3u);
}

BOOST_AUTO_TEST_CASE(the_lock_kind_uses_the_locks_scripts)
{
   lease_kind const lock{};
   BOOST_TEST(!lock.shared());
   auto const a = acquire_call(lock, "p:", "n", "t", 1000ms, 5);
   // RedLock on 5 nodes: the clock's fence, asked by the fence key's TTL sent negative.
   BOOST_TEST(a->code == &acquire_script());
   BOOST_TEST(a->args().at(2).starts_with('-'));
   BOOST_TEST(a->quorum == 0u);
   auto const one = acquire_call(lock, "p:", "n", "t", 1000ms, 1);
   BOOST_TEST(one->code == &acquire_script());
   BOOST_TEST(!one->args().at(2).starts_with('-'));  // one node: the counter's fence
   BOOST_TEST(extend_call(lock, "p:", "n", "t", 1000ms, 5)->code == &extend_script());
   BOOST_TEST(release_call(lock, "p:", "n", "t")->code == &release_script());
   // A split vote's loser releases quietly: nobody named, so no PING to lead with either.
   auto const quiet = release_call(lock, "p:", "n", "t", true, true);
   BOOST_TEST(quiet->args().back() == "quiet");
   BOOST_TEST(!quiet->leads);
   // With the waiter that sent the lost try: it registers where that try took the key.
   std::string const id = "w";
   waiter_entry const rejoin{&id, 1500ms, true};
   auto const rejoins = args_of(release_call(lock, "p:", "n", "t", true, true, &rejoin));
   BOOST_TEST(rejoins.size() == 7u);
   BOOST_TEST(rejoins[4] == "quiet");
   BOOST_TEST(rejoins[5] == "w");
   BOOST_TEST(rejoins[6] == "1500");
   // Only a quiet release carries it.
   BOOST_TEST(release_call(lock, "p:", "n", "t", true, false, &rejoin)->args().size() == 4u);
   // A waiter that a release names has the key reserved for handoff_reserve.
   auto const named = args_of(release_call(lock, "p:", "n", "t", true));
   BOOST_TEST(named.size() == 4u);
   BOOST_TEST(named[2] == "to:");
   BOOST_TEST(named[3] == std::to_string(handoff_reserve.count()));
   // A lease that took its key over from a local handover releases the handed token with its
   // own, in the same call; a quiet release (a lost try's, which holds no lease) never does.
   std::string const old = "old";
   auto const handed = args_of(release_call(lock, "p:", "n", "t", true, false, nullptr, &old));
   BOOST_TEST(handed.size() == 6u);
   BOOST_TEST(handed[4] == "handed");
   BOOST_TEST(handed[5] == "old");
   BOOST_TEST(release_call(lock, "p:", "n", "t", false, true, nullptr, &old)->args().back() ==
              "quiet");
}

BOOST_AUTO_TEST_CASE(a_permit_is_a_member_of_the_names_set_with_the_permit_quorum)
{
   lease_kind const permit{of::permit, 3};
   BOOST_TEST(permit.shared());
   auto const a = acquire_call(permit, "p:", "n", "t", 1000ms, 5);
   BOOST_TEST(a->code == &set_acquire_script());
   BOOST_TEST(keys_of(a) == (std::vector<std::string>{"p:{n}", "p:{n}:fence"}));
   BOOST_TEST(a->args().back() == "3");
   BOOST_TEST(a->quorum == 4u);
   auto const e = extend_call(permit, "p:", "n", "t", 1000ms, 5);
   BOOST_TEST(e->code == &set_extend_script());
   BOOST_TEST(e->quorum == 4u);
   auto const r = release_call(permit, "p:", "n", "t");
   BOOST_TEST(r->code == &set_release_script());
   BOOST_TEST(r->args().back() == release_channel("p:", "n"));
}

BOOST_AUTO_TEST_CASE(a_reader_is_barred_by_the_writer_and_the_waiting_writer)
{
   lease_kind const read{of::read};
   BOOST_TEST(read.shared());
   auto const a = acquire_call(read, "p:", "n", "t", 1000ms, 5);
   BOOST_TEST(a->code == &set_acquire_script());
   BOOST_TEST(keys_of(a) == (std::vector<std::string>{readers_key("p:", "n"), "p:{n}:fence",
                                                      "p:{n}", writer_waiting_key("p:", "n")}));
   BOOST_TEST(a->quorum == 3u);
   BOOST_TEST(extend_call(read, "p:", "n", "t", 1000ms, 5)->keys().front() ==
              readers_key("p:", "n"));
   BOOST_TEST(release_call(read, "p:", "n", "t")->code == &set_release_script());
}

BOOST_AUTO_TEST_CASE(a_writer_is_taken_by_its_script_and_renewed_and_released_as_a_lock)
{
   lease_kind const write{of::write};
   BOOST_TEST(!write.shared());
   auto const a = acquire_call(write, "p:", "n", "t", 1000ms, 5);
   BOOST_TEST(a->code == &write_acquire_script());
   BOOST_TEST(keys_of(a) ==
              (std::vector<std::string>{"p:{n}", "p:{n}:fence", readers_key("p:", "n"),
                                        writer_waiting_key("p:", "n")}));
   // The mark lives writer_wait_ttl; the writer tries again at least every quarter of it.
   BOOST_TEST(a->args().at(3) == std::to_string(writer_wait_ttl.count()));
   BOOST_TEST(a->args().at(4) == std::to_string((writer_wait_ttl / 4).count()));
   BOOST_TEST(extend_call(write, "p:", "n", "t", 1000ms, 5)->code == &extend_script());
   BOOST_TEST(release_call(write, "p:", "n", "t")->code == &release_script());
   // A writer registers no waiters: its release has none to keep quiet about.
   BOOST_TEST(release_call(write, "p:", "n", "t", false, true)->args().size() == 2u);
   std::string const old = "old";
   BOOST_TEST(release_call(write, "p:", "n", "t", false, false, nullptr, &old)->args().size() ==
              2u);
}

BOOST_AUTO_TEST_CASE(a_reentrant_hold_is_a_member_of_the_holds_beside_the_owners_key)
{
   lease_kind const hold{of::reentrant, 1, "request-42"};
   BOOST_TEST(!hold.shared());
   auto const a = acquire_call(hold, "p:", "n", "t", 1000ms, 5);
   BOOST_TEST(a->code == &reentrant_acquire_script());
   BOOST_TEST(keys_of(a) ==
              (std::vector<std::string>{"p:{n}", "p:{n}:fence", holds_key("p:", "n")}));
   BOOST_TEST(a->args().front() == "t");
   BOOST_TEST(a->args().back() == owner_token("request-42"));
   BOOST_TEST(a->quorum == 0u);  // the majority
   BOOST_TEST(extend_call(hold, "p:", "n", "t", 1000ms, 5)->code == &reentrant_extend_script());
   auto const r = release_call(hold, "p:", "n", "t");
   BOOST_TEST(r->code == &reentrant_release_script());
   BOOST_TEST(r->args().back() == owner_token("request-42"));
}

BOOST_AUTO_TEST_CASE(a_fair_lock_queues_beside_the_lock_key_and_is_renewed_as_a_lock)
{
   lease_kind const fair{of::fair};
   BOOST_TEST(!fair.shared());
   BOOST_TEST(renewed_in_batches(fair));
   auto const a = acquire_call(fair, "p:", "n", "t", 1000ms, 5);
   BOOST_TEST(a->code == &fair_acquire_script());
   BOOST_TEST(keys_of(a) == (std::vector<std::string>{"p:{n}", "p:{n}:fence", queue_key("p:", "n"),
                                                      queue_deadlines_key("p:", "n")}));
   BOOST_TEST(a->args().front() == "t");
   BOOST_TEST(a->args().back() == std::to_string(fair_entry_ttl.count()));
   BOOST_TEST(a->quorum == 0u);  // the majority
   BOOST_TEST(extend_call(fair, "p:", "n", "t", 1000ms, 5)->code == &extend_script());
   auto const r = release_call(fair, "p:", "n", "t");
   BOOST_TEST(r->code == &fair_release_script());
   BOOST_TEST(keys_of(r) == (std::vector<std::string>{"p:{n}", queue_key("p:", "n"),
                                                      queue_deadlines_key("p:", "n")}));
   BOOST_TEST(args_of(r) == (std::vector<std::string>{"t", release_channel("p:", "n"),
                                                      std::string{handoff_prefix}}));
   BOOST_TEST((fair_acquire_script().role == script_role::acquire));
   BOOST_TEST((fair_release_script().role == script_role::release));
}

BOOST_AUTO_TEST_CASE(an_owner_token_is_32_hex_characters_the_same_for_the_same_owner)
{
   auto const t = owner_token("request-42");
   BOOST_TEST(t.size() == 32u);
   BOOST_TEST(t.find_first_not_of("0123456789abcdef") == std::string::npos);
   BOOST_TEST(t == owner_token("request-42"));
   BOOST_TEST(t != owner_token("request-43"));
}

BOOST_AUTO_TEST_CASE(every_key_of_a_name_shares_its_hash_tag)
{
   for (auto const& k :
        {readers_key("p:", "n"), writer_waiting_key("p:", "n"), holds_key("p:", "n"),
         queue_key("p:", "n"), queue_deadlines_key("p:", "n")})
      BOOST_TEST(k.starts_with("p:{n}"));
}

BOOST_AUTO_TEST_CASE(the_new_acquire_scripts_answer_as_the_acquire_script)
{
   BOOST_TEST((set_acquire_script().role == script_role::acquire));
   BOOST_TEST((write_acquire_script().role == script_role::acquire));
   BOOST_TEST((set_extend_script().role == script_role::extend && !set_extend_script().batched));
   BOOST_TEST((set_release_script().role == script_role::release));
   BOOST_TEST((reentrant_acquire_script().role == script_role::acquire));
   BOOST_TEST((reentrant_extend_script().role == script_role::extend &&
               !reentrant_extend_script().batched));
   BOOST_TEST((reentrant_release_script().role == script_role::release));
   BOOST_TEST((acquire_script().role == script_role::acquire));
   BOOST_TEST((release_script().role == script_role::release));
   BOOST_TEST(set_acquire_script().sha1 == sha1_hex(set_acquire_script().text));
}

// A permit's release or extend is blamed on the key only when the nodes that found it gone sink
// its own quorum (4 of 5), not the majority's.
BOOST_AUTO_TEST_CASE(verdicts_use_the_fanouts_quorum)
{
   fanout_result r;
   r.decision = outcome::lost;
   r.quorum = 4;
   r.nodes.resize(5);
   for (std::size_t i = 0; i < 5; ++i)
      r.nodes[i].v = i < 3 ? vote::yes : vote::no;  // 2 gone: 3 yes can no longer reach 4
   BOOST_TEST((ownership_result(r) == locksmith::error::lease_expired));
   r.quorum = 0;  // the majority: 2 gone of 5 do not sink it
   BOOST_TEST((ownership_result(r) != locksmith::error::lease_expired));
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace test_lease_kinds
