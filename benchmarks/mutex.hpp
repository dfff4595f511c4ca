// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
// The mutual-exclusion scenario: several clients in this process (each as a separate process
// would be: its own connections and local queue) x coroutines x names, on redis-servers of its
// own, for both strategies, counting overlaps at the resource (test/support/contention.hpp).
#ifndef LOCKSMITH_BENCH_MUTEX_HPP
#define LOCKSMITH_BENCH_MUTEX_HPP

#include <chrono>
#include <vector>

namespace locksmith::bench {

/// What `--scenario mutex` runs.
struct mutex_plan {
   std::vector<int> nodes{1, 5};  // a run per node count, each with both strategies
   std::chrono::seconds duration{5};
   bool json = false;
   bool fence = true;  // lock_options::fence (--no-fence)
};

/// Prints one row or JSON line per (nodes, strategy), then subscribe's rate over spin's. Returns
/// false on an overlap, a fencing-token inversion or any error: the servers are healthy.
bool run_mutex(mutex_plan const& plan);

}  // namespace locksmith::bench

#endif
