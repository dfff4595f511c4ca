// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
#include "transport/script_call.hpp"

#include "sansio/keys.hpp"

#include <boost/assert.hpp>

#include <algorithm>
#include <charconv>
#include <cstring>
#include <tuple>

namespace locksmith::detail {
namespace redis = boost::redis;

namespace {

// Room for a bulk string's framing: `$`, its length's digits (20 at most) and two CRLFs.
constexpr std::size_t framing = 32;

// Copies `part` to `out` and moves past it. An empty part may have no data at all (a default
// string_view), which memcpy must not be given.
void put(char*& out, std::string_view part)
{
   if (!part.empty())
      out = static_cast<char*>(std::memcpy(out, part.data(), part.size())) + part.size();
}

// Writes `$<length>\r\n<parts...>\r\n` at `out`, which has room for it (framed_size); returns
// its end. Boost.Redis frames a string by std::to_string, then appends through iterators (a
// temporary string, for a long one) and a character at a time: about 500 instructions per
// argument, which made the two requests of a lock cycle (about 14 arguments) a tenth of its
// client work (callgrind, locksmith-bench --scenario independent --no-fence).
template <class... Parts>
char* write_frame(char* out, Parts... parts)
{
   *out++ = '$';
   out = std::to_chars(out, out + framing, (parts.size() + ...)).ptr;
   *out++ = '\r';
   *out++ = '\n';
   (put(out, parts), ...);
   *out++ = '\r';
   *out++ = '\n';
   return out;
}

template <class... Parts>
std::size_t framed_size(Parts... parts)
{
   return (parts.size() + ...) + framing;
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

using framed_list = boost::container::small_vector<framed, 16>;

// A plain call's options, between its token and its ttl: SET key token NX PX ttl.
constexpr std::string_view nx_frame = "$2\r\nNX\r\n";
constexpr std::string_view px_frame = "$2\r\nPX\r\n";

// The content of a frame: `hello` of `$5\r\nhello\r\n`.
std::string_view content(std::string_view frame)
{
   frame.remove_prefix(frame.find('\n') + 1);
   frame.remove_suffix(2);
   return frame;
}

// Appends the command to `req` (push_script): for a plain call, SET key token NX PX ttl; else
// EVALSHA sha (or EVAL text) nkeys keys... args....
void push_frames(redis::request& req, script const& code, script_call::frame_list const& frames,
                 std::size_t nkeys, bool by_text)
{
   framed_list all;
   // The script's SHA-1 (or text) and the number of keys are framed here too: Boost.Redis
   // frames only the command's name.
   char sha[framing + 40];
   std::string text;
   char numkeys[2 * framing];
   if (code.plain) {
      // The key, then the token and the ttl (unfenced_acquire_call).
      BOOST_ASSERT(frames.size() == 3 && nkeys == 1);
      all = {{frames[0]}, {frames[1]}, {nx_frame}, {px_frame}, {frames[2]}};
   } else {
      if (by_text) {
         text.resize(framed_size(code.text));
         text.resize(static_cast<std::size_t>(write_frame(text.data(), code.text) - text.data()));
      }
      char digits[framing];
      auto const n = std::to_chars(digits, digits + framing, nkeys).ptr;
      std::string_view const count{digits, static_cast<std::size_t>(n - digits)};
      auto const sha_end = by_text ? sha : write_frame(sha, code.sha1);
      all.push_back({by_text ? std::string_view{text}
                             : std::string_view{sha, static_cast<std::size_t>(sha_end - sha)}});
      auto const count_end = write_frame(numkeys, count);
      all.push_back({{numkeys, static_cast<std::size_t>(count_end - numkeys)}});
      for (auto f : frames)
         all.push_back({f});
   }
   std::string_view const cmd = code.plain ? "SET" : by_text ? "EVAL" : "EVALSHA";
   // The whole request in one allocation: the array's header, the command's name, the frames.
   std::size_t size = 2 * framing + cmd.size();
   for (auto const& f : all)
      size += f.bytes.size();
   req.reserve(req.payload().size() + size);
   req.push_range(cmd, all.begin(), all.end());
}

}  // namespace

script_call::builder::builder(script const& code)
    : code_{code}
{}

template <class... Parts>
void script_call::builder::add(bool is_key, Parts... parts)
{
   auto const at = bytes_.size();
   bytes_.resize(at + framed_size(parts...), boost::container::default_init);
   auto const end = write_frame(bytes_.data() + at, parts...);
   bytes_.resize(static_cast<std::size_t>(end - bytes_.data()));
   ends_.push_back(static_cast<std::uint32_t>(bytes_.size()));
   if (!is_key)
      return;
   // The request has the keys first: a key that comes after arguments goes before them (rare:
   // the calls add their keys first).
   if (nkeys_ < ends_.size() - 1) {
      auto const keys_end = nkeys_ == 0 ? 0 : ends_[nkeys_ - 1];
      auto const len = static_cast<std::uint32_t>(bytes_.size() - at);
      std::rotate(bytes_.begin() + keys_end, bytes_.begin() + static_cast<std::ptrdiff_t>(at),
                  bytes_.end());
      ends_.pop_back();
      for (auto i = nkeys_; i < ends_.size(); ++i)
         ends_[i] += len;
      ends_.insert(ends_.begin() + static_cast<std::ptrdiff_t>(nkeys_), keys_end + len);
   }
   ++nkeys_;
}

script_call::builder& script_call::builder::key(std::string_view prefix, std::string_view name,
                                                std::string_view suffix)
{
   std::apply([this](auto... parts) { add(true, parts...); }, key_parts(prefix, name, suffix));
   return *this;
}

script_call::builder& script_call::builder::key(std::string_view k)
{
   add(true, k);
   return *this;
}

script_call::builder& script_call::builder::arg(std::string_view a)
{
   add(false, a);
   return *this;
}

script_call::builder& script_call::builder::arg_of_name(std::string_view prefix,
                                                        std::string_view name,
                                                        std::string_view suffix)
{
   std::apply([this](auto... parts) { add(false, parts...); }, key_parts(prefix, name, suffix));
   return *this;
}

script_call::builder& script_call::builder::arg(long long n)
{
   char digits[24];
   auto const end = std::to_chars(digits, digits + sizeof digits, n).ptr;
   return arg(std::string_view{digits, static_cast<std::size_t>(end - digits)});
}

std::shared_ptr<script_call> script_call::builder::done(bool leads) const
{
   frame_list frames;
   std::string_view const all{bytes_.data(), bytes_.size()};
   std::size_t begin = 0;
   for (auto const end : ends_) {
      frames.push_back(all.substr(begin, end - begin));
      begin = end;
   }
   return std::make_shared<script_call>(code_, frames, nkeys_, leads);
}

script_call::script_call(script const& s, frame_list const& frames, std::size_t nkeys, bool lead)
    : code{&s}
    , leads{lead && s.publishes}
    , nkeys_{nkeys}
{
   // Only here: the EVAL fallback, and an ASKING request (whose ASKING must come right before
   // the script), go without the PING.
   if (leads)
      by_sha.push("PING");
   push_frames(by_sha, s, frames, nkeys, false);
   // Where the request has each frame: at its end, in order (a plain call's NX and PX between
   // the token and the ttl).
   constexpr std::size_t options = nx_frame.size() + px_frame.size();
   std::size_t tail = s.plain ? options : 0;
   for (auto f : frames)
      tail += f.size();
   auto at = by_sha.payload().size() - tail;
   for (std::size_t i = 0; i < frames.size(); ++i) {
      if (s.plain && i == 2)
         at += options;
      spans_.emplace_back(static_cast<std::uint32_t>(at),
                          static_cast<std::uint32_t>(at + frames[i].size()));
      at += frames[i].size();
   }
   BOOST_ASSERT(this->frames() == frames);
}

script_call::frame_list script_call::frames() const
{
   frame_list out;
   std::string_view const payload = by_sha.payload();
   for (auto [begin, end] : spans_)
      out.push_back(payload.substr(begin, end - begin));
   return out;
}

std::string_view script_call::first_key() const noexcept
{
   if (nkeys_ == 0)
      return {};
   auto const [begin, end] = spans_.front();
   return content(by_sha.payload().substr(begin, end - begin));
}

std::vector<std::string_view> script_call::contents(std::size_t from, std::size_t to) const
{
   auto const all = frames();
   std::vector<std::string_view> out;
   for (std::size_t i = from; i < to; ++i)
      out.push_back(content(all[i]));
   return out;
}

std::vector<std::string_view> script_call::keys() const
{
   return contents(0, nkeys_);
}

std::vector<std::string_view> script_call::args() const
{
   return contents(nkeys_, spans_.size());
}

std::shared_ptr<script_call const> script_call::with_code(script const& other) const
{
   auto c = std::make_shared<script_call>(other, frames(), nkeys_, leads);
   c->quorum = quorum;
   return c;
}

void push_script(redis::request& req, script_call const& c, bool by_text)
{
   push_frames(req, *c.code, c.frames(), c.nkeys_, by_text);
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
