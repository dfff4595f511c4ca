// Mutual exclusion across processes, the one test that no single process can fake: several
// processes (fork), each with one client and several coroutines, increment one counter under the
// lock with a non-atomic GET, yield, SET. With exclusion the counter ends exact; without it,
// increments are lost.
//
// With a shared kind (a semaphore's permits, a read-write lock's sides), each holder instead
// counts itself in and out of an occupancy counter on the same server (`counter`:holders, and
// `counter`:writers for writers), and checks there that the kind's bound holds; the highest
// occupancy seen is kept in the sorted set `counter`:max (member "holders").
#pragma once

#include <locksmith/detail/lease_kind.hpp>
#include <locksmith/lock_options.hpp>

#include "support/keys.hpp"

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace locksmith::test {

struct counter_run {
   std::vector<std::string> nodes;               // the lock's nodes
   std::uint16_t counter_port = 0;               // the loopback redis-server that holds the counter
   std::string name = unique_key("lock");        // the lock's name
   std::string counter = unique_key("counter");  // the counter's key
   // With more than one (the lock kind only), coroutine j locks name_of((j + i) % names) in its
   // round i, and counts in counter_of of the same index: the increments spread over the names.
   int names = 1;
   int processes = 4;
   int workers = 8;  // coroutines per process, on one client
   int rounds = 25;  // increments per coroutine
   lock_options lock;
   locksmith::detail::lease_kind kind{};  // the lock by default
   int writers = 0;  // with kind read: the first `writers` coroutines of each process write
   std::chrono::milliseconds hold{0};  // a shared holder stays this long (at least one yield)
   // With the fair lock, when the counter's server is also the lock's (node 0): each holder
   // appends to `counter`:turns, under the lock, one line of its token and the queue it sees.
   bool record_turns = false;
   std::chrono::milliseconds node_timeout{1000};
   // An unlock may end in quorum_unreachable and still be right when nodes freeze: the release
   // lands where our key is once they thaw. When false, that counts as a failed unlock.
   bool unconfirmed_unlock_ok = false;
   std::chrono::seconds child_budget{60};  // a child gives up after this long
   std::chrono::seconds deadline{90};      // the parent kills what still runs after this long

   int increments() const { return processes * workers * rounds; }  // over all the names

   std::string name_of(int k) const { return names == 1 ? name : name + std::to_string(k); }
   std::string counter_of(int k) const
   {
      return names == 1 ? counter : counter + "/" + std::to_string(k);
   }
};

// What went wrong in a child, as bits of its exit status.
struct child_trouble {
   static constexpr int unfinished = 1;  // not every coroutine finished within the child's budget
   static constexpr int lock_failed = 2;
   static constexpr int unlock_misreported = 4;  // not_owner or lease_expired for a valid lease
   static constexpr int overrun =
      8;  // the write came after the validity: the lock did not cover it
   static constexpr int exception = 16;
   static constexpr int unlock_failed = 32;   // any other unlock error
   static constexpr int counter_failed = 64;  // the GET or SET of the counter failed
   static constexpr int bound_broken = 128;   // more holders at once than the kind allows
};

struct counter_outcome {
   std::vector<int> statuses;  // each child's wait status, or -1 when it was killed at the deadline
   std::chrono::steady_clock::duration took{};
};

// Forks the children and reaps them, calling `meanwhile` about every 5 ms until all have exited
// (a test makes its faults there). Kills those still running at r.deadline.
counter_outcome run_counter_processes(counter_run const& r,
                                      std::function<void()> const& meanwhile = {});

// Checks (Boost.Test) that every child exited 0, and says what went wrong in those that did not.
void check_children(counter_outcome const& o, counter_run const& r);

// run_counter_processes(r), then check_children: for a run with no faults to make meanwhile.
counter_outcome run_and_check_children(counter_run const& r);

// The lines that the holders of a record_turns run appended, in order: each the holder's token,
// then the tokens queued behind it when it held, head first.
std::vector<std::vector<std::string>> recorded_turns(counter_run const& r);

// The highest occupancy that the holders of a shared kind saw (`counter`:max), read from the
// counter's server.
long long highest_occupancy(counter_run const& r);

}  // namespace locksmith::test
