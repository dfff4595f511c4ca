// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
#include "sansio/scripts.hpp"
#include "sansio/unfenced_reply.hpp"

#include <openssl/sha.h>

#include <charconv>

namespace locksmith::detail {
namespace {

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

std::string server_error(boost::redis::generic_response const& r)
{
   return r.has_error() ? r.error().diagnostic : std::string{};
}

bool is_noscript(boost::redis::generic_response const& r)
{
   return r.has_error() && r.error().diagnostic.starts_with("NOSCRIPT");
}

void strip_leading_pong(boost::redis::generic_response& resp)
{
   if (resp.has_error() || resp.value().size() < 2)
      return;
   auto& nodes = resp.value();
   auto const& first = nodes.front();
   if (first.depth == 0 && first.data_type == type::simple_string && first.value == "PONG")
      nodes.erase(nodes.begin());
}

script const& unfenced_acquire_script()
{
   static script const s{"unfenced acquire", {}, {}, script_role::acquire, false, true};
   return s;
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
                       // A fencing token is positive; 0 when none was asked for (fence ttl 0).
                       (flag != 1 || value >= 0) &&
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

error_code parse_unfenced_acquire(boost::redis::generic_response const& r, acquire_reply& out)
{
   if (r.has_error() || r.value().empty() || r.value().size() > 2)
      return error::unexpected_reply;
   auto const& nodes = r.value();
   std::int64_t pttl = -1;
   auto const& set = nodes[0];
   bool const taken = set.data_type == type::simple_string && set.value == "OK";
   if ((!taken && set.data_type != type::null) || set.depth != 0 ||
       (nodes.size() == 2 && (nodes[1].depth != 0 || !is_integer(nodes[1], pttl))))
      return error::unexpected_reply;
   out = acquire_reply{};
   out.acquired = taken;
   out.pttl = std::chrono::milliseconds{taken ? 0 : pttl == -2 ? 0 : pttl};
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
