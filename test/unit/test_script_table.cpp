// The scripts' table (support/script_table.hpp) run against fake_store: the C++ that stands for
// the lock's Lua scripts in the unit tests must answer every row as Redis does (the integration
// suite runs the same rows against a real redis-server). Rows that fake_store cannot run say why.
#include "support/fake_store.hpp"
#include "support/script_table.hpp"

#include "sansio/set_scripts.hpp"

#include <boost/test/unit_test.hpp>

#include <chrono>
#include <set>
#include <string>
#include <vector>

namespace test_script_table {

namespace {

using locksmith::test::key_state;
using locksmith::test::observation;
using locksmith::test::reply;
using locksmith::test::script_row;

// fake_store's evaluate(), with the state and the reply in the table's terms.
class table_store : public locksmith::test::fake_store {
public:
   table_store()
       : fake_store{
            static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(
                                          std::chrono::system_clock::now().time_since_epoch())
                                          .count())}
   {}

   observation run(script_row const& row)
   {
      observation seen;
      seen.t0_us = static_cast<std::int64_t>(server_time());
      for (auto const& k : row.before) {
         BOOST_TEST_REQUIRE((k.type == key_state::kind::string), "fake_store holds strings only");
         auto value = locksmith::test::resolve_before(k.items.at(0), seen.t0_us / 1000);
         if (k.ttl > 0)
            set(k.key, std::move(value), std::chrono::milliseconds{k.ttl});
         else
            set(k.key, std::move(value));
      }
      auto const resp =
         evaluate(row.code(), row.keys, row.args,
                  [&](std::string const& channel, std::string const& message) {
                     seen.published.push_back(locksmith::test::published_as(channel, message));
                  });
      seen.t1_us = static_cast<std::int64_t>(server_time());
      seen.answer = to_reply(resp);
      for (auto const& key : keys()) {
         auto const left = ttl(key);
         auto const ms = left ? std::chrono::ceil<std::chrono::milliseconds>(*left).count() : -1;
         seen.after.push_back(locksmith::test::str(key, *get(key), ms));
      }
      return seen;
   }

private:
   // The reply as the blocking client reads it from a real server.
   static reply to_reply(boost::redis::generic_response const& r)
   {
      using boost::redis::resp3::type;
      reply out;
      if (r.has_error()) {
         out.type = reply::kind::error;
         out.str = r.error().diagnostic;
         return out;
      }
      auto one = [](boost::redis::resp3::node const& n, reply& to) {
         to.type = n.data_type == type::number ? reply::kind::integer : reply::kind::bulk;
         to.str = n.value;
         to.integer = n.data_type == type::number ? std::stoll(n.value) : 0;
      };
      auto const& nodes = r.value();
      BOOST_TEST_REQUIRE(!nodes.empty());
      if (nodes[0].data_type != type::array) {
         one(nodes[0], out);
         return out;
      }
      out.type = reply::kind::array;
      out.elements.resize(nodes.size() - 1);
      for (std::size_t i = 1; i < nodes.size(); ++i)
         one(nodes[i], out.elements[i - 1]);
      return out;
   }
};

}  // namespace

BOOST_AUTO_TEST_SUITE(script_table)

BOOST_AUTO_TEST_CASE(fake_store_answers_every_row_as_redis_does)
{
   std::size_t ran = 0;
   for (auto const& row : locksmith::test::script_rows()) {
      auto const& code = row.code();
      // The table says which rows the fake cannot run: all those of the scripts it does not model.
      BOOST_TEST((table_store::models(code) || row.real_only),
                 "row \"" << row.what << "\" (" << code.name << ") needs real_only");
      if (row.real_only)
         continue;
      table_store store;
      locksmith::test::check_row(row, store.run(row));
      ++ran;
   }
   BOOST_TEST(ran >= 15u);
}

// Every script has rows, and every script that fake_store models has rows that it runs.
BOOST_AUTO_TEST_CASE(every_script_has_rows)
{
   std::set<locksmith::detail::script const*> covered, on_the_fake;
   for (auto const& row : locksmith::test::script_rows()) {
      covered.insert(&row.code());
      if (!row.real_only)
         on_the_fake.insert(&row.code());
   }
   for (auto const* s : locksmith::detail::every_script()) {
      BOOST_TEST(covered.contains(s), s->name << " has no row");
      if (table_store::models(*s))
         BOOST_TEST(on_the_fake.contains(s), s->name << " has no row that fake_store runs");
   }
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace test_script_table
