// Unit tests of a script call's requests (src/transport/script_call.hpp): its keys and arguments,
// framed once by its builder, make the EVALSHA request, the EVAL fallback and a cluster's sharded
// twin byte for byte as Boost.Redis frames the same command, and read back as they were given.
#include "protocol/calls.hpp"
#include "sansio/keys.hpp"
#include "sansio/scripts.hpp"
#include "sansio/set_scripts.hpp"
#include "transport/script_call.hpp"

#include <boost/test/unit_test.hpp>

#include <boost/redis/request.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace test_script_call {

namespace {

using locksmith::detail::script;
using locksmith::detail::script_call;
namespace key_suffix = locksmith::detail::key_suffix;

// The same command as Boost.Redis frames it from strings.
std::string reference(std::string_view cmd, std::string_view code,
                      std::vector<std::string> const& keys, std::vector<std::string> const& args)
{
   std::vector<std::string> all{std::to_string(keys.size())};
   all.insert(all.end(), keys.begin(), keys.end());
   all.insert(all.end(), args.begin(), args.end());
   boost::redis::request req;
   req.push_range(cmd, code, all.begin(), all.end());
   return std::string{req.payload()};
}

std::vector<std::string> strings(std::vector<std::string_view> const& v)
{
   return {v.begin(), v.end()};
}

}  // namespace

BOOST_AUTO_TEST_SUITE(script_call_requests)

BOOST_AUTO_TEST_CASE(keys_and_arguments_in_any_order_frame_as_boost_redis_does)
{
   auto const& code = locksmith::detail::release_script();
   script_call::builder b{code};
   // An argument first, a key after it, an empty argument, a number, a long one: the keys go
   // first all the same.
   b.arg("tok").key("p:", "name").arg_of_name("p:", "name", key_suffix::released);
   b.key("p:", "name", key_suffix::waiters).arg("").arg(-90000).arg(std::string(300, 'x'));
   auto const call = b.done();
   std::vector<std::string> const keys{"p:{name}", "p:{name}:waiters"};
   std::vector<std::string> const args{"tok", "p:{name}:released", "", "-90000",
                                       std::string(300, 'x')};
   BOOST_TEST(strings(call->keys()) == keys);
   BOOST_TEST(strings(call->args()) == args);
   BOOST_TEST(call->first_key() == "p:{name}");
   BOOST_TEST(call->by_sha.payload() == reference("EVALSHA", code.sha1, keys, args));
   BOOST_TEST(call->by_sha.get_commands() == 1u);
   BOOST_TEST(call->by_text().payload() == reference("EVAL", code.text, keys, args));
}

BOOST_AUTO_TEST_CASE(a_call_without_keys_has_no_first_key)
{
   auto const& code = locksmith::detail::acquire_script();
   auto const call = script_call::builder{code}.arg("a").done();
   BOOST_TEST(call->first_key().empty());
   BOOST_TEST(call->keys().empty());
   BOOST_TEST(call->by_sha.payload() == reference("EVALSHA", code.sha1, {}, {"a"}));
}

BOOST_AUTO_TEST_CASE(another_script_takes_the_same_keys_arguments_quorum_and_lead)
{
   auto const call = locksmith::detail::release_call("p:", "n", "tok", true, true);
   BOOST_TEST(call->leads);
   auto const& twin = locksmith::detail::sharded_twin(*call->code);
   BOOST_TEST(&twin != call->code);
   auto const other = call->with_code(twin);
   BOOST_TEST(other->code == &twin);
   BOOST_TEST(strings(other->keys()) == strings(call->keys()));
   BOOST_TEST(strings(other->args()) == strings(call->args()));
   BOOST_TEST(other->leads);
   BOOST_TEST(other->quorum == call->quorum);
   BOOST_TEST(other->by_sha.payload().ends_with(
      reference("EVALSHA", twin.sha1, strings(call->keys()), strings(call->args()))));
}

BOOST_AUTO_TEST_CASE(the_unfenced_acquire_reads_back_its_key_token_and_ttl)
{
   auto const call =
      locksmith::detail::unfenced_acquire_call("p:", "n", "tok", std::chrono::milliseconds{1500});
   BOOST_TEST(strings(call->keys()) == std::vector<std::string>{"p:{n}"});
   BOOST_TEST(strings(call->args()) == (std::vector<std::string>{"tok", "1500"}));
   BOOST_TEST(call->first_key() == "p:{n}");
   boost::redis::request set;
   set.push("SET", "p:{n}", "tok", "NX", "PX", "1500");
   BOOST_TEST(call->by_sha.payload() == set.payload());
}

BOOST_AUTO_TEST_CASE(empty_arguments_even_without_data_frame_as_empty_strings)
{
   auto const& code = locksmith::detail::acquire_script();
   // A default string_view has no data at all (the sanitizers' build checks that none is copied).
   auto const call =
      script_call::builder{code}.key("p:", "n").arg(std::string_view{}).arg("").done();
   BOOST_TEST(strings(call->args()) == (std::vector<std::string>{"", ""}));
   BOOST_TEST(call->by_sha.payload() == reference("EVALSHA", code.sha1, {"p:{n}"}, {"", ""}));
}

BOOST_AUTO_TEST_CASE(a_batch_of_hundreds_of_leases_frames_past_the_inline_buffers)
{
   std::vector<std::string> names, tokens;
   for (int i = 0; i < 300; ++i) {
      names.push_back("name-" + std::to_string(i));
      tokens.push_back("token-" + std::to_string(i));
   }
   std::vector<locksmith::detail::extension> leases;
   for (std::size_t i = 0; i < names.size(); ++i)
      leases.push_back({&names[i], &tokens[i], std::chrono::milliseconds{1000 + i}});
   auto const call = locksmith::detail::extend_call("p:", leases);
   std::vector<std::string> keys, args;
   for (std::size_t i = 0; i < names.size(); ++i) {
      keys.push_back("p:{" + names[i] + "}");
      keys.push_back("p:{" + names[i] + "}:fence");
      args.push_back(tokens[i]);
      args.push_back(std::to_string(1000 + i));
      args.push_back(std::to_string(1000 + i + locksmith::detail::fence_linger.count()));
   }
   BOOST_TEST(call->first_key() == "p:{name-0}");
   BOOST_TEST(strings(call->keys()) == keys);
   BOOST_TEST(strings(call->args()) == args);
   BOOST_TEST(call->by_sha.payload() == reference("EVALSHA", call->code->sha1, keys, args));
}

// ASKING's request (command_link): ASKING, then the call's command alone, without the PING that
// a publishing call's own request leads with.
BOOST_AUTO_TEST_CASE(a_call_pushed_behind_asking_goes_without_its_ping)
{
   auto const release = locksmith::detail::release_call("p:", "n", "tok", true, true);
   BOOST_TEST(release->leads);
   boost::redis::request asking;
   asking.push("ASKING");
   push_script(asking, *release, false);
   boost::redis::request expected;
   expected.push("ASKING");
   BOOST_TEST(asking.payload() == std::string{expected.payload()} +
                                     reference("EVALSHA", release->code->sha1,
                                               strings(release->keys()), strings(release->args())));
   BOOST_TEST(asking.get_commands() == 2u);
   auto const set =
      locksmith::detail::unfenced_acquire_call("p:", "n", "tok", std::chrono::milliseconds{1500});
   boost::redis::request plain;
   plain.push("ASKING");
   push_script(plain, *set, true);  // by text: still the SET, never a script
   expected.push("SET", "p:{n}", "tok", "NX", "PX", "1500");
   BOOST_TEST(plain.payload() == expected.payload());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace test_script_call
