// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
// What every locksmith-chaos run does around its workload, faults or operations: the shared
// block, forking and reaping the worker processes, and the checks made on each node at the end.
#ifndef LOCKSMITH_CHAOS_PROCESSES_HPP
#define LOCKSMITH_CHAOS_PROCESSES_HPP

#include "worker.hpp"

#include <sys/types.h>

#include <string>
#include <vector>

namespace locksmith::bench {

class netem_net;

/// A shared_block in an anonymous shared mapping, which the forked workers write to; null when
/// it cannot be mapped. Never unmapped: it lives as long as the harness.
shared_block* map_shared_block();

/// Forks o.processes workers, each a client on `nodes` (moved into `net` first, when given).
/// Each dies with the harness (PR_SET_PDEATHSIG) and leaves Ctrl-C to it. Throws
/// std::runtime_error when fork() fails.
std::vector<pid_t> fork_workers(chaos_options const& o, std::vector<std::string> const& nodes,
                                std::string const& resource, shared_block& shm,
                                netem_net const* net = nullptr);

/// Waits for each worker, and counts those that did not exit cleanly. One still running after
/// the wait + 20 s is killed and counts as a hang too. Empties `pids`.
long reap_workers(chaos_options const& o, std::vector<pid_t>& pids, shared_block& shm);

/// SIGKILL and reap, for a run that ends on an error. Empties `pids`.
void kill_workers(std::vector<pid_t>& pids) noexcept;

/// Lock keys (not fence keys, nor the restart quarantine's trusted-run mark) still on the node;
/// -1 when it cannot be asked.
long orphan_keys(std::string const& url);

/// Connections still subscribed on the node, a Sentinel's aside; -1 when it cannot be asked.
long subscribed_clients(std::string const& url);

/// `[a,b,...]`: each in whole ms.
std::string ms_list(std::vector<double> const& ms);

/// `s` made safe inside a JSON string: quotes become ', controls and backslashes spaces.
std::string json_text(std::string s);

}  // namespace locksmith::bench

#endif
