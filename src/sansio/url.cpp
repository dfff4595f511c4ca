// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
#include "sansio/url.hpp"

#include <algorithm>
#include <charconv>
#include <limits>

namespace locksmith::detail {
namespace {

bool parse_number(std::string_view s, long long max, long long& out)
{
   if (s.empty() || s.size() > 10)
      return false;
   auto const [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
   return ec == std::errc{} && p == s.data() + s.size() && out >= 0 && out <= max;
}

int hex_value(char c)
{
   if (c >= '0' && c <= '9')
      return c - '0';
   if (c >= 'a' && c <= 'f')
      return c - 'a' + 10;
   if (c >= 'A' && c <= 'F')
      return c - 'A' + 10;
   return -1;
}

std::optional<std::string> percent_decode(std::string_view s)
{
   std::string out;
   for (std::size_t i = 0; i < s.size(); ++i) {
      if (s[i] != '%') {
         out += s[i];
         continue;
      }
      if (i + 2 >= s.size())
         return std::nullopt;
      int const hi = hex_value(s[i + 1]), lo = hex_value(s[i + 2]);
      if (hi < 0 || lo < 0)
         return std::nullopt;
      out += static_cast<char>(hi * 16 + lo);
      i += 2;
   }
   return out;
}

// Splits "user:password" (both optional, percent-encoded) into the url.
bool parse_userinfo(std::string_view info, node_url& u)
{
   auto const colon = info.find(':');
   auto user = percent_decode(info.substr(0, colon));
   auto pass = percent_decode(colon == info.npos ? std::string_view{} : info.substr(colon + 1));
   if (!user || !pass)
      return false;
   u.user = std::move(*user);
   u.password = std::move(*pass);
   return true;
}

// Splits "host[:port]" or "[v6][:port]".
bool parse_hostport(std::string_view hp, node_url& u)
{
   std::string_view port;
   if (hp.starts_with('[')) {
      auto const close = hp.find(']');
      if (close == hp.npos)
         return false;
      u.host = hp.substr(1, close - 1);
      auto const rest = hp.substr(close + 1);
      if (!rest.empty() && !rest.starts_with(':'))
         return false;
      port = rest.empty() ? std::string_view{} : rest.substr(1);
      if (rest == ":")
         return false;
   } else {
      auto const colon = hp.find(':');
      u.host = hp.substr(0, colon);
      if (colon != hp.npos) {
         port = hp.substr(colon + 1);
         if (port.empty())
            return false;
      }
   }
   if (u.host.empty() || u.host.find_first_of(" /?#@[]") != std::string::npos)
      return false;
   if (!port.empty()) {
      long long p = 0;
      if (!parse_number(port, 65535, p) || p == 0)
         return false;
      u.port = std::to_string(p);
   }
   return true;
}

// Takes "user:password@" off the front of the authority, if it has one.
bool take_userinfo(std::string_view& authority, node_url& u)
{
   auto const at = authority.rfind('@');
   if (at == authority.npos)
      return true;
   if (!parse_userinfo(authority.substr(0, at), u))
      return false;
   authority.remove_prefix(at + 1);
   return true;
}

// An empty database is the default, 0.
bool parse_database(std::string_view db, node_url& u)
{
   long long n = 0;
   if (!db.empty() && !parse_number(db, std::numeric_limits<int>::max(), n))
      return false;
   u.database = static_cast<int>(n);
   return true;
}

// Printable ASCII without the URL's own separators, so that it reads back the same.
bool valid_master_name(std::string_view s)
{
   return !s.empty() && std::all_of(s.begin(), s.end(), [](unsigned char c) {
      return c > 0x20 && c < 0x7f && c != '/' && c != '?' && c != '#';
   });
}

// "host[:port],host[:port]...", each port `default_port` when none is given.
bool parse_hosts(std::string_view list, std::string_view default_port, std::vector<endpoint>& out)
{
   for (;;) {
      auto const comma = list.find(',');
      node_url one;
      one.port = default_port;
      if (!parse_hostport(list.substr(0, comma), one))
         return false;
      out.push_back({std::move(one.host), std::move(one.port)});
      if (comma == list.npos)
         return true;
      list.remove_prefix(comma + 1);
   }
}

// What follows "redis+sentinel://".
std::optional<node_url> parse_sentinel_url(std::string_view url)
{
   node_url u;
   u.port.clear();
   auto const slash = url.find('/');
   if (slash == url.npos)
      return std::nullopt;  // no master name
   auto authority = url.substr(0, slash);
   if (!take_userinfo(authority, u) || !parse_hosts(authority, default_sentinel_port, u.sentinels))
      return std::nullopt;
   auto const path = url.substr(slash + 1);
   auto const next = path.find('/');
   u.master_name = path.substr(0, next);
   if (!valid_master_name(u.master_name))
      return std::nullopt;
   if (next != path.npos && !parse_database(path.substr(next + 1), u))
      return std::nullopt;
   return u;
}

// What follows "redis+cluster://": the seeds, and nothing after them.
std::optional<node_url> parse_cluster_url(std::string_view authority)
{
   node_url u;
   u.host.clear();
   u.port.clear();
   if (authority.find('/') != authority.npos || !take_userinfo(authority, u) ||
       !parse_hosts(authority, "6379", u.seeds))
      return std::nullopt;
   return u;
}

}  // namespace

std::optional<node_url> parse_url(std::string_view url)
{
   if (url.starts_with("redis+sentinel://"))
      return parse_sentinel_url(url.substr(17));
   if (url.starts_with("redis+cluster://"))
      return parse_cluster_url(url.substr(16));
   node_url u;
   if (url.starts_with("redis://")) {
      url.remove_prefix(8);
   } else if (url.starts_with("rediss://")) {
      url.remove_prefix(9);
      u.tls = true;
   } else {
      return std::nullopt;
   }
   auto const slash = url.find('/');
   auto authority = url.substr(0, slash);
   if (!take_userinfo(authority, u) || !parse_hostport(authority, u))
      return std::nullopt;
   if (slash != url.npos && !parse_database(url.substr(slash + 1), u))
      return std::nullopt;
   return u;
}

namespace {

// Escapes what would end the user name early.
std::string percent_encode(std::string_view s)
{
   static constexpr char hex[] = "0123456789ABCDEF";
   std::string out;
   for (unsigned char c : s) {
      if (c == '%' || c == ':' || c == '@' || c == '/' || c < 0x21 || c > 0x7e) {
         out += '%';
         out += hex[c >> 4];
         out += hex[c & 0xf];
      } else {
         out += static_cast<char>(c);
      }
   }
   return out;
}

// "host:port", with an IPv6 host in brackets.
std::string shown_host(std::string const& host, std::string const& port)
{
   return (host.find(':') != std::string::npos ? "[" + host + "]" : host) + ":" + port;
}

}  // namespace

std::string redacted(node_url const& u)
{
   std::string s = u.sentinel()  ? "redis+sentinel://"
                   : u.cluster() ? "redis+cluster://"
                   : u.tls       ? "rediss://"
                                 : "redis://";
   if (!u.user.empty())
      s += percent_encode(u.user) + (u.password.empty() ? "@" : ":***@");
   else if (!u.password.empty())
      s += ":***@";
   if (u.sentinel()) {
      for (auto const& e : u.sentinels)
         s += (&e == &u.sentinels.front() ? "" : ",") + shown_host(e.host, e.port);
      s += "/" + u.master_name;
   } else if (u.cluster()) {
      for (auto const& e : u.seeds)
         s += (&e == &u.seeds.front() ? "" : ",") + shown_host(e.host, e.port);
   } else {
      s += shown_host(u.host, u.port);
   }
   if (u.database != 0)
      s += "/" + std::to_string(u.database);
   return s;
}

}  // namespace locksmith::detail
