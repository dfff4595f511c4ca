// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
#ifndef LOCKSMITH_DETAIL_QUORUM_HPP
#define LOCKSMITH_DETAIL_QUORUM_HPP

#include <cstddef>

namespace locksmith::detail {

/// The majority of n nodes: n/2 + 1. One node is its own quorum.
constexpr std::size_t quorum_of(std::size_t n) noexcept
{
   return n / 2 + 1;
}

/// The nodes that must grant a permit of a semaphore of `permits` over n nodes: more than
/// n × permits / (permits + 1). Each node admits at most `permits` holders, so permits + 1
/// holders would need (permits + 1) × quorum > n × permits places: they cannot all hold one.
/// A majority is not enough beyond one permit (3 permits on 5 nodes: 4 holders of 3 nodes each
/// fit in 15 places), so the quorum grows towards n with the permits, and fewer nodes may fail.
/// One permit is the majority.
constexpr std::size_t permit_quorum(std::size_t n, std::size_t permits) noexcept
{
   if (permits == 0 || n <= 1 || permits >= n - 1)
      return n;  // n × permits / (permits + 1) is then above n - 1
   return n / (permits + 1) * permits + (n % (permits + 1)) * permits / (permits + 1) + 1;
}

/// Where a fan-out stands.
enum class outcome { pending, won, lost };

/// Counts the votes of n nodes and decides as soon as the result is known: won when `quorum`
/// nodes said yes, lost as soon as so many said no (or failed) that the quorum cannot be reached.
class vote_counter {
public:
   /// `quorum` 0 is the majority (quorum_of).
   explicit constexpr vote_counter(std::size_t nodes, std::size_t quorum = 0) noexcept
       : nodes_{nodes}
       , quorum_{quorum != 0 ? quorum : quorum_of(nodes)}
   {}

   /// Records one node's vote; returns the outcome so far.
   constexpr outcome record(bool yes) noexcept
   {
      (yes ? yes_ : no_) += 1;
      return state();
   }

   constexpr outcome state() const noexcept
   {
      if (yes_ >= quorum_)
         return outcome::won;
      if (no_ > nodes_ - quorum_)
         return outcome::lost;
      return outcome::pending;
   }

   constexpr std::size_t yes() const noexcept { return yes_; }
   constexpr std::size_t no() const noexcept { return no_; }
   constexpr std::size_t pending() const noexcept { return nodes_ - yes_ - no_; }
   constexpr std::size_t quorum() const noexcept { return quorum_; }

private:
   std::size_t nodes_;
   std::size_t quorum_;
   std::size_t yes_ = 0;
   std::size_t no_ = 0;
};

}  // namespace locksmith::detail

#endif
