// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
#include "sansio/script_errors.hpp"

namespace locksmith::detail {
namespace {

// Redis 6's evalGenericCommand: "ERR Error running script (call to f_<sha1>): <Lua's error>", where
// Lua's error starts with where it was raised, once or twice ("@user_script:1: @user_script: 1: "),
// and a command's error follows, with its dash when redis.call raised it ("-READONLY ...") or
// without (a reply that was an error, "WRONGTYPE ...").
constexpr std::string_view wrapped = "ERR Error running script (call to ";
// The ACL check inside scripts raises these as ERR, not as NOPERM: Redis 6 wrapped, Redis 7.0
// with where the script stopped appended, and Redis 8.0 and Valkey 8.1 in words of their own.
constexpr std::string_view acl_denials[] = {
   "The user executing the script can't run this command or subcommand",
   "The user executing the script can't access at least one of the keys",
   "ACL failure in script: ",
};

bool is_code_char(char c) noexcept
{
   return (c >= 'A' && c <= 'Z') || c == '_' || c == '-';
}

std::string_view trim_end(std::string_view s) noexcept
{
   while (!s.empty() && (s.back() == ' ' || s.back() == '\n' || s.back() == '\r'))
      s.remove_suffix(1);
   return s;
}

// Drops one "@user_script:1: ", "@user_script: 1: " or "user_script:1: " from the front; false
// when there is none.
bool skip_location(std::string_view& s) noexcept
{
   auto t = s;
   if (t.starts_with('@'))
      t.remove_prefix(1);
   if (!t.starts_with("user_script:"))
      return false;
   t.remove_prefix(std::string_view{"user_script:"}.size());
   if (t.starts_with(' '))
      t.remove_prefix(1);
   std::size_t digits = 0;
   while (digits < t.size() && t[digits] >= '0' && t[digits] <= '9')
      ++digits;
   if (digits == 0 || t.substr(digits, 2) != ": ")
      return false;
   s = t.substr(digits + 2);
   return true;
}

}  // namespace

std::string_view unwrap_script_error(std::string_view m) noexcept
{
   if (!m.starts_with(wrapped))
      return m;
   auto const close = m.find("): ", wrapped.size());
   if (close == std::string_view::npos)
      return m;
   auto inner = m.substr(close + 3);
   while (skip_location(inner)) {}
   if (inner.starts_with('-'))
      inner.remove_prefix(1);
   // A command's error starts with its code in capitals and a blank; anything else (a Lua
   // runtime error, an ACL denial) is the script's own error: ERR, as the server said.
   std::size_t n = 0;
   while (n < inner.size() && is_code_char(inner[n]))
      ++n;
   if (n < 2 || n >= inner.size() || inner[n] != ' ')
      return trim_end(m);
   return trim_end(inner);
}

std::string_view server_error_code(std::string_view m) noexcept
{
   auto const inner = unwrap_script_error(m);
   if (inner.starts_with("ERR ")) {
      for (auto denial : acl_denials)
         if (inner.find(denial) != std::string_view::npos)
            return "NOPERM";
   }
   std::size_t n = 0;
   while (n < inner.size() && is_code_char(inner[n]))
      ++n;
   return inner.substr(0, n);
}

}  // namespace locksmith::detail
