// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
#include "transport/script_call.hpp"

#include <boost/container/small_vector.hpp>

#include <string_view>

namespace locksmith::detail {
namespace redis = boost::redis;

namespace {

void push_eval(redis::request& req, std::string_view cmd, std::string_view code,
               std::vector<std::string> const& keys, std::vector<std::string> const& args)
{
   boost::container::small_vector<std::string_view, 12> all;
   auto const nkeys = std::to_string(keys.size());
   all.push_back(nkeys);
   all.insert(all.end(), keys.begin(), keys.end());
   all.insert(all.end(), args.begin(), args.end());
   // The whole request in one allocation: each bulk string costs its length and at most 16
   // bytes of framing (`$<length>\r\n...\r\n`), and so does the array header.
   std::size_t size = 16 + cmd.size() + 16 + code.size() + 16;
   for (auto const& a : all)
      size += a.size() + 16;
   req.reserve(req.payload().size() + size);
   req.push_range(cmd, code, all.begin(), all.end());
}

}  // namespace

void push_script(redis::request& req, script_call const& c, bool by_text)
{
   if (c.code->plain) {
      req.push("SET", c.keys.at(0), c.args.at(0), "NX", "PX", c.args.at(1));
   } else if (by_text) {
      push_eval(req, "EVAL", c.code->text, c.keys, c.args);
   } else {
      push_eval(req, "EVALSHA", c.code->sha1, c.keys, c.args);
   }
}

script_call::script_call(script const& s, std::vector<std::string> k, std::vector<std::string> a)
    : code{&s}
    , keys{std::move(k)}
    , args{std::move(a)}
{
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
