// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
#include "transport/script_call.hpp"

#include <boost/container/small_vector.hpp>

#include <charconv>
#include <string_view>

namespace locksmith::detail {
namespace redis = boost::redis;

namespace {

// One argument of a request, framed (`$<length>\r\n...\r\n`) by three appends of a pointer and
// a length. Boost.Redis frames a string by std::to_string, then appends through iterators and a
// character at a time: about 500 instructions per argument, which made the two requests of a
// lock cycle (about 14 arguments) a tenth of its client work (callgrind, locksmith-bench
// --scenario independent --no-fence). Boost.Redis finds this overload by argument-dependent
// lookup.
struct bulk {
   std::string_view s;
};

void boost_redis_to_bulk(std::string& payload, bulk const& b)
{
   char head[24];
   head[0] = '$';
   auto const end = std::to_chars(head + 1, head + sizeof head - 2, b.s.size()).ptr;
   end[0] = '\r';
   end[1] = '\n';
   payload.append(head, static_cast<std::size_t>(end + 2 - head));
   payload.append(b.s.data(), b.s.size());
   payload.append("\r\n", 2);
}

void push_eval(redis::request& req, std::string_view cmd, std::string_view code,
               std::vector<std::string> const& keys, std::vector<std::string> const& args)
{
   boost::container::small_vector<bulk, 12> all;
   auto const nkeys = std::to_string(keys.size());
   all.push_back({nkeys});
   for (auto const& k : keys)
      all.push_back({k});
   for (auto const& a : args)
      all.push_back({a});
   // The whole request in one allocation: each bulk string costs its length and at most 16
   // bytes of framing (`$<length>\r\n...\r\n`), and so does the array header.
   std::size_t size = 16 + cmd.size() + 16 + code.size() + 16;
   for (auto const& a : all)
      size += a.s.size() + 16;
   req.reserve(req.payload().size() + size);
   req.push_range(cmd, code, all.begin(), all.end());
}

}  // namespace

void push_script(redis::request& req, script_call const& c, bool by_text)
{
   if (c.code->plain) {
      auto const& key = c.keys.at(0);
      auto const& token = c.args.at(0);
      auto const& ttl = c.args.at(1);
      // In one allocation, as push_eval: 6 bulk strings of at most 16 bytes of framing each.
      req.reserve(req.payload().size() + 16 * 7 + key.size() + token.size() + ttl.size() + 10);
      req.push("SET", bulk{key}, bulk{token}, bulk{"NX"}, bulk{"PX"}, bulk{ttl});
   } else if (by_text) {
      push_eval(req, "EVAL", c.code->text, c.keys, c.args);
   } else {
      push_eval(req, "EVALSHA", c.code->sha1, c.keys, c.args);
   }
}

script_call::script_call(script const& s, std::vector<std::string> k, std::vector<std::string> a,
                         bool lead)
    : code{&s}
    , keys{std::move(k)}
    , args{std::move(a)}
    , leads{lead && s.publishes}
{
   // Only here: the EVAL fallback, and an ASKING request (whose ASKING must come right before
   // the script), go without the PING.
   if (leads)
      by_sha.push("PING");
   push_script(by_sha, *this, false);
}

redis::request const& script_call::by_text() const
{
   if (code->plain)
      return by_sha;  // never NOSCRIPT
   if (!by_text_) {
      by_text_.emplace();
      push_script(*by_text_, *this, true);
   }
   return *by_text_;
}

}  // namespace locksmith::detail
