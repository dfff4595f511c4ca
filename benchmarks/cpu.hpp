// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
// CPU time of this process, for the cost per acquisition or renewal (a server's is in server.hpp).
#ifndef LOCKSMITH_BENCH_CPU_HPP
#define LOCKSMITH_BENCH_CPU_HPP

#include <sys/resource.h>

namespace locksmith::bench {

/// User plus system CPU time of this process so far, in milliseconds.
inline double cpu_ms_now()
{
   rusage u{};
   ::getrusage(RUSAGE_SELF, &u);
   auto ms = [](timeval t) {
      return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_usec) / 1e3;
   };
   return ms(u.ru_utime) + ms(u.ru_stime);
}

}  // namespace locksmith::bench

#endif
