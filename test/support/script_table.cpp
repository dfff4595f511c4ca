#include "support/script_table.hpp"

#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <charconv>
#include <optional>
#include <sstream>

namespace locksmith::test {
namespace {

// How far below N a "~N" may be: a loaded machine's stall between the script and the check.
constexpr std::int64_t slack_ms = 10000;

std::optional<std::int64_t> integer(std::string_view text)
{
   std::int64_t v = 0;
   auto const [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
   if (ec != std::errc{} || p != text.data() + text.size())
      return std::nullopt;
   return v;
}

// "@ms+N" or "@ms-N": N, else nothing.
std::optional<std::int64_t> ms_offset(std::string const& pattern)
{
   if (!pattern.starts_with("@ms"))
      return std::nullopt;
   auto const rest = std::string_view{pattern}.substr(3);
   return rest.starts_with('+') ? integer(rest.substr(1)) : integer(rest);
}

// True when `actual` is what `pattern` allows (see the top of script_table.hpp).
bool matches(std::string const& pattern, std::string const& actual, observation const& seen)
{
   auto const v = integer(actual);
   if (pattern == "@us")
      return v && *v >= seen.t0_us && *v <= seen.t1_us;
   if (auto const n = ms_offset(pattern))
      return v && *v >= seen.t0_us / 1000 + *n && *v <= seen.t1_us / 1000 + *n;
   if (pattern.starts_with('~')) {
      auto const n = integer(std::string_view{pattern}.substr(1));
      return n && v && *v > 0 && *v <= *n && *v > *n - slack_ms;
   }
   return pattern == actual;
}

std::string describe(reply const& r)
{
   switch (r.type) {
   case reply::kind::array: {
      std::string out = "[";
      for (auto const& e : r.elements)
         out += (out.size() > 1 ? " " : "") + describe(e);
      return out + "]";
   }
   case reply::kind::bulk:
      return "'" + r.str + "'";
   case reply::kind::integer:
      return std::to_string(r.integer);
   case reply::kind::error:
      return "!" + r.str;
   case reply::kind::nil:
      return "(nil)";
   default:
      return r.str;
   }
}

// One element of an expected reply against the element received.
bool element_matches(std::string const& token, reply const& r, observation const& seen)
{
   if (token.size() >= 2 && token.front() == '\'' && token.back() == '\'')
      return r.type == reply::kind::bulk && r.str == token.substr(1, token.size() - 2);
   return r.type == reply::kind::integer && matches(token, std::to_string(r.integer), seen);
}

bool reply_matches(std::string const& expected, observation const& seen)
{
   auto const& r = seen.answer;
   if (expected.starts_with('!'))
      return r.type == reply::kind::error && r.str.find(expected.substr(1)) != std::string::npos;
   if (!expected.starts_with('['))
      return element_matches(expected, r, seen);
   std::istringstream in{expected.substr(1, expected.size() - 2)};
   std::vector<std::string> tokens;
   for (std::string t; in >> t;)
      tokens.push_back(t);
   if (r.type != reply::kind::array || r.elements.size() != tokens.size())
      return false;
   for (std::size_t i = 0; i < tokens.size(); ++i)
      if (!element_matches(tokens[i], r.elements[i], seen))
         return false;
   return true;
}

char const* kind_name(key_state::kind k)
{
   return k == key_state::kind::string ? "string" : k == key_state::kind::zset ? "zset" : "list";
}

std::string describe(key_state const& k)
{
   std::string out = k.key + " (" + kind_name(k.type) + ", ttl " + std::to_string(k.ttl) + "):";
   for (auto const& i : k.items)
      out += " " + i;
   return out;
}

void check_key(key_state const& want, key_state const& got, observation const& seen)
{
   BOOST_TEST_CONTEXT("key " << want.key << ": want " << describe(want) << ", got "
                             << describe(got))
   {
      BOOST_TEST(kind_name(got.type) == kind_name(want.type));
      BOOST_TEST_REQUIRE(got.items.size() == want.items.size());
      for (std::size_t i = 0; i < want.items.size(); ++i)
         BOOST_TEST(matches(want.items[i], got.items[i], seen), "item " << i);
      if (want.ttl == 0)
         BOOST_TEST(got.ttl == -1, "no TTL");
      else
         BOOST_TEST(matches("~" + std::to_string(want.ttl), std::to_string(got.ttl), seen));
   }
}

}  // namespace

std::string resolve_before(std::string const& value, std::int64_t t_ms)
{
   auto const n = ms_offset(value);
   return n ? std::to_string(t_ms + *n) : value;
}

void check_row(script_row const& row, observation const& seen)
{
   BOOST_TEST_CONTEXT("row \"" << row.what << "\" (" << row.code().name << ")")
   {
      BOOST_TEST(reply_matches(row.reply, seen),
                 "reply " << describe(seen.answer) << ", want " << row.reply);
      auto want = row.after;
      std::ranges::sort(want, {}, &key_state::key);
      std::vector<std::string> want_keys, got_keys;
      for (auto const& k : want)
         want_keys.push_back(k.key);
      for (auto const& k : seen.after)
         got_keys.push_back(k.key);
      BOOST_TEST(got_keys == want_keys, boost::test_tools::per_element());
      if (got_keys == want_keys)
         for (std::size_t i = 0; i < want.size(); ++i)
            check_key(want[i], seen.after[i], seen);
      BOOST_TEST(seen.published == row.published, boost::test_tools::per_element());
   }
}

std::vector<script_row> rows_of(std::initializer_list<std::vector<script_row> (*)()> parts,
                                char const* real_only)
{
   std::vector<script_row> rows;
   for (auto* part : parts)
      for (auto& r : part()) {
         if (!r.real_only)
            r.real_only = real_only;
         rows.push_back(std::move(r));
      }
   return rows;
}

std::vector<script_row> const& script_rows()
{
   static std::vector<script_row> const all =
      rows_of({script_rows_of_the_lock, script_rows_of_the_kinds, script_rows_of_the_fair_lock,
               script_rows_of_inspect});
   return all;
}

}  // namespace locksmith::test
