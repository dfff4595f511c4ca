// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
#include "sansio/token.hpp"

#include <pthread.h>
#include <sys/random.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <system_error>

namespace locksmith::detail {

std::string to_hex(std::array<std::uint8_t, 16> const& bytes)
{
   static constexpr char hex[] = "0123456789abcdef";
   std::string out(32, '0');
   for (std::size_t i = 0; i < bytes.size(); ++i) {
      out[2 * i] = hex[bytes[i] >> 4];
      out[2 * i + 1] = hex[bytes[i] & 0xf];
   }
   return out;
}

namespace {

// Bumped in every child of fork(), by a handler registered once, before the first token: a
// buffer filled under another generation is its parent's. Not getpid() per token: glibc does not
// cache the pid, so that was a system call per lock (about 1 µs on this project's VM, where
// locksmith-bench's 64 names counted 1.2 getpid calls per acquisition).
std::atomic<unsigned> fork_generation{0};

unsigned current_generation()
{
   static bool const registered = [] {
      ::pthread_atfork(nullptr, nullptr, [] { fork_generation.fetch_add(1); });
      return true;
   }();
   (void)registered;
   return fork_generation.load(std::memory_order_relaxed);
}

}  // namespace

std::string random_token()
{
   // Read from the kernel's CSPRNG a page at a time: one getrandom call per 256 tokens, not
   // one per lock. Each thread has its own buffer, and no byte is ever served twice. A child of
   // fork() inherits the buffer, so it must not serve from it: it would hand out the very tokens
   // its parent (or a sibling) does. The buffer is therefore tied to the fork generation that
   // filled it.
   thread_local std::array<std::uint8_t, 4096> pool{};
   thread_local std::size_t used = pool.size();
   thread_local unsigned filled_in = 0;
   auto const generation = current_generation();
   if (used == pool.size() || filled_in != generation) {
      filled_in = generation;
      std::size_t got = 0;
      while (got < pool.size()) {
         // getrandom blocks only until the kernel's pool is first initialised, at boot.
         auto const n = ::getrandom(pool.data() + got, pool.size() - got, 0);
         if (n < 0) {
            if (errno == EINTR)
               continue;
            throw std::system_error(errno, std::generic_category(), "getrandom");
         }
         got += static_cast<std::size_t>(n);
      }
      used = 0;
   }
   std::array<std::uint8_t, 16> bytes{};
   std::copy_n(pool.begin() + static_cast<std::ptrdiff_t>(used), bytes.size(), bytes.begin());
   std::fill_n(pool.begin() + static_cast<std::ptrdiff_t>(used), bytes.size(), 0);
   used += bytes.size();
   return to_hex(bytes);
}

void add_owner(std::string& token, std::string_view owner)
{
   if (owner.empty())
      return;
   token.reserve(token.size() + 1 + owner.size());
   token += owner_separator;
   token += owner;
}

std::pair<std::string_view, std::string_view> split_owner(std::string_view value) noexcept
{
   constexpr std::size_t hex_size = 32;
   auto const hex = [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); };
   if (value.size() <= hex_size + 1 || value[hex_size] != owner_separator ||
       !std::all_of(value.begin(), value.begin() + hex_size, hex))
      return {value, {}};
   return {value.substr(0, hex_size), value.substr(hex_size + 1)};
}

}  // namespace locksmith::detail
