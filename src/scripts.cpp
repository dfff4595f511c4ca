// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
#include <locksmith/detail/scripts.hpp>

#include <openssl/sha.h>

#include <charconv>

namespace locksmith::detail {
namespace {

// An acquire: SET NX PX of the lock key, or, with ARGV[4], SET PX over a key that holds that
// token (a lease that a holder of this process hands to the next local waiter); when it is set, a
// fencing token minted from the fence key (KEYS[2], kept ARGV[3] ms) by `mint`, which leaves it
// in `fence`. The GET on the other path makes a key of another type fail with WRONGTYPE, not look
// held forever.
std::string acquire_text(std::string_view mint)
{
   return "\nif redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) or (ARGV[4] and\n"
          "    redis.call('GET', KEYS[1]) == ARGV[4] and\n"
          "    redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])) then\n" +
          std::string{mint} +
          "  return {1, fence}\nend\nredis.call('GET', KEYS[1])\n"
          "return {0, redis.call('PTTL', KEYS[1])}\n";
}

// One node: the fence key's INCR while that key lives, and the server's time in µs when it
// starts anew (INCR answered 1: it was gone). The fence key may therefore expire (it lives a
// little longer than the lock) without leaving one key per lock name forever: the fences it
// handed out are at most its start time plus one per acquisition, and each acquisition takes the
// server more than a microsecond, so its clock has passed them all when it starts again. Two
// commands (INCR, PEXPIRE) where the clock's way takes three and four conversions: a quarter of
// the server's work for a whole lock cycle.
constexpr std::string_view mint_by_counter = R"lua(  local fence = redis.call('INCR', KEYS[2])
  if fence == 1 then
    local t = redis.call('TIME')
    fence = tonumber(t[1]) * 1000000 + tonumber(t[2])
    redis.call('SET', KEYS[2], string.format('%.0f', fence))
  end
  redis.call('PEXPIRE', KEYS[2], ARGV[3])
)lua";

// RedLock: max(last + 1, server time in µs) on each node, so that every node's fence follows the
// clock and the highest of any quorum rises with it: counters alone would drift apart on nodes
// that miss acquisitions, and a later quorum could then answer lower. Lua numbers are doubles,
// exact to 2^53, and µs since 1970 stay below that until the year 2255.
constexpr std::string_view mint_by_clock = R"lua(  local t = redis.call('TIME')
  local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
  local last = tonumber(redis.call('GET', KEYS[2]) or '0')
  local fence = math.max(last + 1, now)
  redis.call('SET', KEYS[2], string.format('%.0f', fence), 'PX', ARGV[3])
)lua";

// The release script acts only where the key holds the caller's token (ARGV[1]): it answers 1
// when done, 0 when another token holds the key, -1 when it is gone.
constexpr std::string_view release_text = R"lua(
local v = redis.call('GET', KEYS[1])
if v == ARGV[1] then
  redis.call('DEL', KEYS[1])
  redis.call('PUBLISH', ARGV[2], ARGV[1])
  return 1
end
if v then return 0 end
return -1
)lua";

// Extends any number of leases in one call, so that the watchdog renews the leases that fall due
// together with one request per node: lease i has KEYS[2i-1] (lock), KEYS[2i] (fence) and
// ARGV[3i-2..3i] (token, ttl, fence ttl). The fence key is kept alive with the lock, so that
// however long a lease is held, the next fence follows the stored one. A key of another type
// is another owner's (pcall: one such key must not fail the other leases of the call).
constexpr std::string_view extend_text = R"lua(
local out = {}
for i = 1, #KEYS / 2 do
  local lock, a = KEYS[2 * i - 1], 3 * i - 2
  local v = redis.pcall('GET', lock)
  if v == ARGV[a] then
    redis.call('PEXPIRE', lock, ARGV[a + 1])
    redis.call('PEXPIRE', KEYS[2 * i], ARGV[a + 2])
    out[i] = 1
  elseif v then
    out[i] = 0
  else
    out[i] = -1
  end
end
return out
)lua";

using boost::redis::resp3::type;

bool is_integer(boost::redis::resp3::node const& n, std::int64_t& out)
{
   if (n.data_type != type::number)
      return false;
   auto const* first = n.value.data();
   auto const* last = first + n.value.size();
   auto const [p, ec] = std::from_chars(first, last, out);
   return ec == std::errc{} && p == last;
}

}  // namespace

std::string sharded_text(std::string_view text)
{
   constexpr std::string_view plain = "redis.call('PUBLISH', ";
   constexpr std::string_view sharded = "redis.call('SPUBLISH', ";
   std::string out;
   for (auto at = text.find(plain); at != std::string_view::npos; at = text.find(plain)) {
      out.append(text.substr(0, at)).append(sharded);
      text.remove_prefix(at + plain.size());
   }
   return out.append(text);
}

std::string sha1_hex(std::string_view text)
{
   unsigned char digest[SHA_DIGEST_LENGTH];
   SHA1(reinterpret_cast<unsigned char const*>(text.data()), text.size(), digest);
   static constexpr char hex[] = "0123456789abcdef";
   std::string out;
   for (unsigned char c : digest) {
      out += hex[c >> 4];
      out += hex[c & 0xf];
   }
   return out;
}

script const& acquire_script()
{
   static std::string const text = acquire_text(mint_by_counter);
   static script const s{"acquire", text, sha1_hex(text), script_role::acquire};
   return s;
}

script const& quorum_acquire_script()
{
   static std::string const text = acquire_text(mint_by_clock);
   static script const s{"quorum acquire", text, sha1_hex(text), script_role::acquire};
   return s;
}

std::array<script const*, 4> all_scripts()
{
   return {&acquire_script(), &quorum_acquire_script(), &release_script(), &extend_script()};
}

script const& release_script()
{
   static script const s{"release", release_text, sha1_hex(release_text), script_role::release};
   return s;
}

script const& extend_script()
{
   static script const s{"extend", extend_text, sha1_hex(extend_text), script_role::extend, true};
   return s;
}

std::string server_error(boost::redis::generic_response const& r)
{
   return r.has_error() ? r.error().diagnostic : std::string{};
}

bool is_noscript(boost::redis::generic_response const& r)
{
   return r.has_error() && r.error().diagnostic.starts_with("NOSCRIPT");
}

error_code parse_acquire(boost::redis::generic_response const& r, acquire_reply& out)
{
   if (r.has_error())
      return error::unexpected_reply;
   auto const& nodes = r.value();
   // flag: 1 acquired (value: the fence), 0 not (value: pttl), 2 not, with only waiters in the
   // way (the fair acquire script, which also names the key's holder when it refuses).
   std::int64_t flag = 0, value = 0;
   bool const named = nodes.size() == 4;
   bool const shaped = (nodes.size() == 3 || named) && nodes[0].data_type == type::array &&
                       nodes[0].aggregate_size == nodes.size() - 1 && is_integer(nodes[1], flag) &&
                       is_integer(nodes[2], value) && flag >= 0 && flag <= 2 &&
                       (flag != 1 || value > 0) &&  // a fencing token is positive
                       (!named || (flag != 1 && nodes[3].data_type == type::blob_string));
   if (!shaped)
      return error::unexpected_reply;
   out.acquired = flag == 1;
   out.waiters_only = flag == 2;
   out.holder = named ? nodes[3].value : std::string{};
   out.fence = out.acquired ? value : 0;
   out.pttl = std::chrono::milliseconds{out.acquired ? 0 : value};
   return {};
}

namespace {

bool to_ownership(std::int64_t v, ownership& out)
{
   if (v < -1 || v > 1)
      return false;
   out = v == 1 ? ownership::done : v == 0 ? ownership::not_owner : ownership::expired;
   return true;
}

}  // namespace

error_code parse_ownership(boost::redis::generic_response const& r, ownership& out)
{
   if (r.has_error())
      return error::unexpected_reply;
   auto const& nodes = r.value();
   std::int64_t v = 0;
   if (nodes.size() != 1 || !is_integer(nodes[0], v) || !to_ownership(v, out))
      return error::unexpected_reply;
   return {};
}

error_code parse_ownerships(boost::redis::generic_response const& r, std::size_t count,
                            std::vector<ownership>& out)
{
   if (r.has_error())
      return error::unexpected_reply;
   auto const& nodes = r.value();
   // An empty Lua table comes back as an empty array: count 0 is one node too.
   if (nodes.size() != count + 1 || nodes[0].data_type != type::array ||
       nodes[0].aggregate_size != count)
      return error::unexpected_reply;
   out.resize(count);
   for (std::size_t i = 0; i < count; ++i) {
      std::int64_t v = 0;
      if (nodes[i + 1].depth != 1 || !is_integer(nodes[i + 1], v) || !to_ownership(v, out[i]))
         return error::unexpected_reply;
   }
   return {};
}

}  // namespace locksmith::detail
