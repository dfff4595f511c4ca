// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
#include "run_spec.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <iterator>
#include <new>
#include <system_error>

namespace locksmith::bench {

std::string_view name_of(scenario s)
{
   // In the order of the enumerators; the static_assert catches one added without a name.
   constexpr std::string_view names[] = {"uncontended", "independent", "contended", "handoff",
                                         "quorum",      "semaphore",   "rwlock",    "reentrant"};
   static_assert(std::size(names) == static_cast<std::size_t>(scenario::reentrant) + 1);
   auto const i = static_cast<std::size_t>(s);
   return i < std::size(names) ? names[i] : "?";
}

std::string_view name_of(strategy s)
{
   constexpr std::string_view names[] = {"raw", "spin", "subscribe"};
   static_assert(std::size(names) == static_cast<std::size_t>(strategy::subscribe) + 1);
   auto const i = static_cast<std::size_t>(s);
   return i < std::size(names) ? names[i] : "?";
}

shared_block* map_shared_block()
{
   void* p = ::mmap(nullptr, sizeof(shared_block), PROT_READ | PROT_WRITE,
                    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
   if (p == MAP_FAILED)
      throw std::system_error{errno, std::generic_category(), "mmap"};
   return new (p) shared_block{};
}

void unmap_shared_block(shared_block* b) noexcept
{
   if (!b)
      return;
   b->~shared_block();
   ::munmap(b, sizeof(shared_block));
}

namespace {

// Moves exactly n bytes with `io` (read or write), through partial transfers and EINTR.
template <class Io, class Byte>
bool transfer_all(Io io, int fd, Byte* p, std::size_t n)
{
   while (n > 0) {
      auto const k = io(fd, p, n);
      if (k < 0 && errno == EINTR)
         continue;
      if (k <= 0)
         return false;
      p += k;
      n -= static_cast<std::size_t>(k);
   }
   return true;
}

bool write_all(int fd, void const* data, std::size_t n)
{
   return transfer_all(::write, fd, static_cast<char const*>(data), n);
}

bool read_all(int fd, void* data, std::size_t n)
{
   return transfer_all(::read, fd, static_cast<char*>(data), n);
}

template <class T>
bool write_vector(int fd, std::vector<T> const& v)
{
   std::uint64_t const n = v.size();
   return write_all(fd, &n, sizeof n) && write_all(fd, v.data(), n * sizeof(T));
}

template <class T>
bool read_vector(int fd, std::vector<T>& v)
{
   std::uint64_t n = 0;
   if (!read_all(fd, &n, sizeof n) || n > (std::uint64_t{1} << 32))
      return false;
   v.resize(n);
   return read_all(fd, v.data(), n * sizeof(T));
}

}  // namespace

bool write_result(int fd, process_result const& r)
{
   std::vector<char> const error(r.first_error.begin(), r.first_error.end());
   return write_all(fd, &r.failures, sizeof r.failures) &&
          write_all(fd, &r.cpu_ms, sizeof r.cpu_ms) && write_all(fd, &r.tries, sizeof r.tries) &&
          write_all(fd, &r.retries_lost, sizeof r.retries_lost) && write_vector(fd, r.per_worker) &&
          write_vector(fd, r.cycle_ns) && write_vector(fd, r.handoff_ns) &&
          write_vector(fd, r.acquire_ns) && write_vector(fd, r.unreachable_ns) &&
          write_vector(fd, error);
}

bool read_result(int fd, process_result& r)
{
   std::vector<char> error;
   if (!(read_all(fd, &r.failures, sizeof r.failures) && read_all(fd, &r.cpu_ms, sizeof r.cpu_ms) &&
         read_all(fd, &r.tries, sizeof r.tries) &&
         read_all(fd, &r.retries_lost, sizeof r.retries_lost) && read_vector(fd, r.per_worker) &&
         read_vector(fd, r.cycle_ns) && read_vector(fd, r.handoff_ns) &&
         read_vector(fd, r.acquire_ns) && read_vector(fd, r.unreachable_ns) &&
         read_vector(fd, error)))
      return false;
   r.first_error.assign(error.begin(), error.end());
   return true;
}

}  // namespace locksmith::bench
