// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
#include "transport/script_call.hpp"

#include <charconv>

namespace locksmith::detail {
namespace redis = boost::redis;

namespace {

// Room for a bulk string's framing: `$`, its length's digits and two CRLFs.
constexpr std::size_t framing = 24;

void put(std::string& out, std::string_view s)
{
   out.append(s.data(), s.size());
}

template <std::size_t N>
void put(boost::container::small_vector<char, N>& out, std::string_view s)
{
   out.insert(out.end(), s.data(), s.data() + s.size());
}

// Frames `parts` as one bulk string at the end of `out`: `$<length>\r\n<parts...>\r\n`, by
// appends of a pointer and a length. Boost.Redis frames a string by std::to_string, then
// appends through iterators (a temporary string, for a long one) and a character at a time:
// about 500 instructions per argument, which made the two requests of a lock cycle (about 14
// arguments) a tenth of its client work (callgrind, locksmith-bench --scenario independent
// --no-fence).
template <class Out, class... Parts>
void append_bulk(Out& out, Parts... parts)
{
   char head[framing];
   head[0] = '$';
   auto const end = std::to_chars(head + 1, head + framing - 2, (parts.size() + ...)).ptr;
   end[0] = '\r';
   end[1] = '\n';
   put(out, std::string_view{head, static_cast<std::size_t>(end + 2 - head)});
   (put(out, std::string_view{parts}), ...);
   put(out, "\r\n");
}

// One bulk string already framed, written as it is: Boost.Redis finds this overload by
// argument-dependent lookup, and counts one argument per element of a range of them.
struct framed {
   std::string_view bytes;
};

void boost_redis_to_bulk(std::string& payload, framed const& f)
{
   payload.append(f.bytes.data(), f.bytes.size());
}

using frame_list = boost::container::small_vector<framed, 16>;

// `s` framed in `buf` (at least s.size() + framing bytes).
framed frame_in(char* buf, std::string_view s)
{
   buf[0] = '$';
   auto end = std::to_chars(buf + 1, buf + framing - 2, s.size()).ptr;
   *end++ = '\r';
   *end++ = '\n';
   end = std::copy(s.begin(), s.end(), end);
   *end++ = '\r';
   *end++ = '\n';
   return {std::string_view{buf, static_cast<std::size_t>(end - buf)}};
}

}  // namespace

script_call::builder::builder(script const& code)
    : code_{code}
{
   keys_.reserve(256);
}

template <class... Parts>
void script_call::builder::add_key(Parts... parts)
{
   append_bulk(keys_, parts...);
   key_ends_.push_back(static_cast<std::uint32_t>(keys_.size()));
}

template <class... Parts>
void script_call::builder::add_arg(Parts... parts)
{
   append_bulk(args_, parts...);
   arg_ends_.push_back(static_cast<std::uint32_t>(args_.size()));
}

script_call::builder& script_call::builder::key(std::string_view prefix, std::string_view name,
                                                std::string_view suffix)
{
   using namespace std::string_view_literals;
   add_key(prefix, "{"sv, name, "}"sv, suffix);
   return *this;
}

script_call::builder& script_call::builder::key(std::string_view k)
{
   add_key(k);
   return *this;
}

script_call::builder& script_call::builder::arg(std::string_view a)
{
   add_arg(a);
   return *this;
}

script_call::builder& script_call::builder::arg_of_name(std::string_view prefix,
                                                        std::string_view name,
                                                        std::string_view suffix)
{
   using namespace std::string_view_literals;
   add_arg(prefix, "{"sv, name, "}"sv, suffix);
   return *this;
}

script_call::builder& script_call::builder::arg(long long n)
{
   char digits[24];
   auto const end = std::to_chars(digits, digits + sizeof digits, n).ptr;
   return arg(std::string_view{digits, static_cast<std::size_t>(end - digits)});
}

std::shared_ptr<script_call> script_call::builder::done(bool leads)
{
   auto const nkeys = key_ends_.size();
   auto const at = static_cast<std::uint32_t>(keys_.size());
   keys_.append(args_.data(), args_.size());
   for (auto e : arg_ends_)
      key_ends_.push_back(at + e);
   return std::make_shared<script_call>(code_, std::move(keys_), std::move(key_ends_), nkeys,
                                        leads);
}

script_call::script_call(script const& s, std::string frames, frame_ends ends, std::size_t nkeys,
                         bool lead)
    : code{&s}
    , leads{lead && s.publishes}
    , frames_{std::move(frames)}
    , ends_{std::move(ends)}
    , nkeys_{nkeys}
{
   if (nkeys_ > 0)
      first_key_ = content(0);
   // Only here: the EVAL fallback, and an ASKING request (whose ASKING must come right before
   // the script), go without the PING.
   if (leads)
      by_sha.push("PING");
   push_script(by_sha, *this, false);
}

std::string_view script_call::frame(std::size_t i) const noexcept
{
   std::size_t const begin = i == 0 ? 0 : ends_[i - 1];
   return std::string_view{frames_}.substr(begin, ends_[i] - begin);
}

std::string_view script_call::content(std::size_t i) const noexcept
{
   auto f = frame(i);
   f.remove_prefix(f.find('\n') + 1);
   f.remove_suffix(2);
   return f;
}

std::vector<std::string_view> script_call::keys() const
{
   std::vector<std::string_view> out;
   for (std::size_t i = 0; i < nkeys_; ++i)
      out.push_back(content(i));
   return out;
}

std::vector<std::string_view> script_call::args() const
{
   std::vector<std::string_view> out;
   for (std::size_t i = nkeys_; i < ends_.size(); ++i)
      out.push_back(content(i));
   return out;
}

std::shared_ptr<script_call const> script_call::with_code(script const& other) const
{
   auto c = std::make_shared<script_call>(other, frames_, ends_, nkeys_, leads);
   c->quorum = quorum;
   return c;
}

void push_script(redis::request& req, script_call const& c, bool by_text)
{
   frame_list all;
   if (c.code->plain) {
      // SET key token NX PX ttl: the key, then the token and the ttl (unfenced_acquire_call).
      all = {{c.frame(0)}, {c.frame(1)}, {"$2\r\nNX\r\n"}, {"$2\r\nPX\r\n"}, {c.frame(2)}};
      req.reserve(req.payload().size() + 32 + c.frames_.size() + 16);
      return req.push_range("SET", all.begin(), all.end());
   }
   // The script's SHA-1 (or text) and the number of keys, framed here: what Boost.Redis frames
   // itself is only the command's name.
   char sha[framing + 40];
   std::string text;
   if (by_text)
      append_bulk(text, c.code->text);
   all.push_back(by_text ? framed{text} : frame_in(sha, c.code->sha1));
   char digits[framing];
   char nkeys[2 * framing];
   auto const end = std::to_chars(digits, digits + framing, c.nkeys_).ptr;
   all.push_back(frame_in(nkeys, {digits, static_cast<std::size_t>(end - digits)}));
   for (std::size_t i = 0; i < c.ends_.size(); ++i)
      all.push_back({c.frame(i)});
   auto const cmd = by_text ? std::string_view{"EVAL"} : std::string_view{"EVALSHA"};
   // The whole request in one allocation.
   std::size_t size = 2 * framing + cmd.size();
   for (auto const& f : all)
      size += f.bytes.size();
   req.reserve(req.payload().size() + size);
   req.push_range(cmd, all.begin(), all.end());
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
