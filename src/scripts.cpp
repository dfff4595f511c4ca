// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
#include <locksmith/detail/scripts.hpp>

#include <openssl/sha.h>

#include <charconv>

namespace locksmith::detail {
namespace {

// The fencing token is max(last + 1, server time in µs). The fence key may therefore expire (it
// lives a little longer than the lock) without leaving one key per lock name forever: after it
// expires, the server's clock, which has moved on, keeps the sequence increasing. Lua numbers are
// doubles, exact to 2^53, and µs since 1970 stay below that until the year 2255.
constexpr std::string_view acquire_text = R"lua(
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  local t = redis.call('TIME')
  local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
  local last = tonumber(redis.call('GET', KEYS[2]) or '0')
  local fence = math.max(last + 1, now)
  redis.call('SET', KEYS[2], string.format('%.0f', fence), 'PX', ARGV[3])
  return {1, fence}
end
redis.call('GET', KEYS[1])
return {0, redis.call('PTTL', KEYS[1])}
)lua";
// (The GET above makes a key of another type fail with WRONGTYPE, not look held forever.)

// The release and extend scripts act only where the key holds the caller's token (ARGV[1]):
// they answer 1 when done, 0 when another token holds the key, -1 when it is gone.
std::string owner_checked(std::string_view action)
{
   return "\nlocal v = redis.call('GET', KEYS[1])\nif v == ARGV[1] then\n" + std::string{action} +
          "  return 1\nend\nif v then return 0 end\nreturn -1\n";
}

// Deletes the key and tells the waiters, with the token as the message.
constexpr std::string_view release_action = "  redis.call('DEL', KEYS[1])\n"
                                            "  redis.call('PUBLISH', ARGV[2], ARGV[1])\n";

// The fence key is kept alive with the lock, so that however long a lease is held, the next
// fence follows the stored one and does not rest on the server's clock alone.
constexpr std::string_view extend_action = "  redis.call('PEXPIRE', KEYS[1], ARGV[2])\n"
                                           "  redis.call('PEXPIRE', KEYS[2], ARGV[3])\n";

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
   static script const s{"acquire", acquire_text, sha1_hex(acquire_text), reply_shape::acquire};
   return s;
}

script const& release_script()
{
   static std::string const text = owner_checked(release_action);
   static script const s{"release", text, sha1_hex(text)};
   return s;
}

script const& extend_script()
{
   static std::string const text = owner_checked(extend_action);
   static script const s{"extend", text, sha1_hex(text)};
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
   std::int64_t flag = 0, value = 0;
   bool const shaped = nodes.size() == 3 && nodes[0].data_type == type::array &&
                       nodes[0].aggregate_size == 2 && is_integer(nodes[1], flag) &&
                       is_integer(nodes[2], value) && (flag == 0 || flag == 1) &&
                       (flag == 0 || value > 0);  // a fencing token is positive
   if (!shaped)
      return error::unexpected_reply;
   out.acquired = flag == 1;
   out.fence = out.acquired ? value : 0;
   out.pttl = std::chrono::milliseconds{out.acquired ? 0 : value};
   return {};
}

error_code parse_ownership(boost::redis::generic_response const& r, ownership& out)
{
   if (r.has_error())
      return error::unexpected_reply;
   auto const& nodes = r.value();
   std::int64_t v = 0;
   if (nodes.size() != 1 || !is_integer(nodes[0], v))
      return error::unexpected_reply;
   switch (v) {
   case 1:
      out = ownership::done;
      return {};
   case 0:
      out = ownership::not_owner;
      return {};
   case -1:
      out = ownership::expired;
      return {};
   default:
      return error::unexpected_reply;
   }
}

}  // namespace locksmith::detail
