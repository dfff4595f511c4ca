// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
// The cluster scenario: the independent-names workload (test/support/contention.hpp, holds of 0)
// against a Redis Cluster of 1 master and then of 3 (test/support/cluster_group.hpp), with the
// rate, its scaling ratio and the masters' CPU per acquisition, from which benchmarks/README.md
// derives locks per second per Redis core.
#ifndef LOCKSMITH_BENCH_CLUSTER_HPP
#define LOCKSMITH_BENCH_CLUSTER_HPP

#include <chrono>
#include <vector>

namespace locksmith::bench {

/// What `--scenario cluster` runs.
struct cluster_plan {
   std::vector<int> masters{1, 3};  // a cluster of each size, in turn
   std::chrono::seconds duration{5};
   bool json = false;
   bool fence = true;  // lock_options::fence (--no-fence)
};

/// Prints one row or JSON line per cluster size, then the last size's rate over the first's.
/// Returns false on an overlap, a fencing-token inversion or any error: the servers are healthy.
bool run_cluster(cluster_plan const& plan);

}  // namespace locksmith::bench

#endif
