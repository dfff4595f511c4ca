// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
#include "run_spec.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <new>
#include <system_error>

namespace locksmith::bench {

std::string_view name_of(scenario s)
{
   switch (s) {
   case scenario::uncontended:
      return "uncontended";
   case scenario::independent:
      return "independent";
   case scenario::contended:
      return "contended";
   case scenario::handoff:
      return "handoff";
   case scenario::quorum:
      return "quorum";
   }
   return "?";
}

std::string_view name_of(strategy s)
{
   switch (s) {
   case strategy::raw:
      return "raw";
   case strategy::spin:
      return "spin";
   case strategy::subscribe:
      return "subscribe";
   }
   return "?";
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

bool write_all(int fd, void const* data, std::size_t n)
{
   auto const* p = static_cast<char const*>(data);
   while (n > 0) {
      auto const k = ::write(fd, p, n);
      if (k < 0 && errno == EINTR)
         continue;
      if (k <= 0)
         return false;
      p += k;
      n -= static_cast<std::size_t>(k);
   }
   return true;
}

bool read_all(int fd, void* data, std::size_t n)
{
   auto* p = static_cast<char*>(data);
   while (n > 0) {
      auto const k = ::read(fd, p, n);
      if (k < 0 && errno == EINTR)
         continue;
      if (k <= 0)
         return false;
      p += k;
      n -= static_cast<std::size_t>(k);
   }
   return true;
}

template <class T> bool write_vector(int fd, std::vector<T> const& v)
{
   std::uint64_t const n = v.size();
   return write_all(fd, &n, sizeof n) && write_all(fd, v.data(), n * sizeof(T));
}

template <class T> bool read_vector(int fd, std::vector<T>& v)
{
   std::uint64_t n = 0;
   if (!read_all(fd, &n, sizeof n) || n > (std::uint64_t{1} << 32))
      return false;
   v.resize(n);
   return read_all(fd, v.data(), n * sizeof(T));
}

} // namespace

bool write_result(int fd, process_result const& r)
{
   std::vector<char> const error(r.first_error.begin(), r.first_error.end());
   return write_all(fd, &r.failures, sizeof r.failures) &&
          write_all(fd, &r.cpu_ms, sizeof r.cpu_ms) && write_vector(fd, r.per_worker) &&
          write_vector(fd, r.cycle_ns) && write_vector(fd, r.handoff_ns) &&
          write_vector(fd, r.acquire_ns) && write_vector(fd, r.unreachable_ns) &&
          write_vector(fd, error);
}

bool read_result(int fd, process_result& r)
{
   std::vector<char> error;
   if (!(read_all(fd, &r.failures, sizeof r.failures) && read_all(fd, &r.cpu_ms, sizeof r.cpu_ms) &&
         read_vector(fd, r.per_worker) && read_vector(fd, r.cycle_ns) &&
         read_vector(fd, r.handoff_ns) && read_vector(fd, r.acquire_ns) &&
         read_vector(fd, r.unreachable_ns) && read_vector(fd, error)))
      return false;
   r.first_error.assign(error.begin(), error.end());
   return true;
}

} // namespace locksmith::bench
