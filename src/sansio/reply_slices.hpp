// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
#ifndef LOCKSMITH_DETAIL_REPLY_SLICES_HPP
#define LOCKSMITH_DETAIL_REPLY_SLICES_HPP

#include <cstddef>

namespace locksmith::detail {

/// Hands a connection's replies to their callers a slice at a time, so that the requests the
/// first callers send next are written while the later replies are still being handled.
///
/// Boost.Redis completes every reply of one read back to back, and its writer, woken by the
/// first new request, runs only after all of them: when a whole round of replies fits one read
/// (64 unfenced lock cycles' replies are 288 bytes), the client handles the round while the
/// server idles, then writes the next round while the client idles, and the two never work at
/// once (locksmith-bench --scenario independent --no-fence: 62 requests per write, one read per
/// write, at 0.6 x the fenced lock's rate, whose larger replies took several reads). A slice is
/// delivered at once; the replies past it wait for a turn posted behind the writer.
///
/// No I/O: the link delivers, queues and posts the turn when told to. Replies keep their order:
/// none is delivered at once while older ones wait.
class reply_slices {
public:
   /// `per_slice`: replies delivered between two turns of the executor (at least 1).
   explicit reply_slices(std::size_t per_slice) noexcept
       : per_slice_{per_slice < 1 ? 1 : per_slice}
   {}

   /// A reply came back, and `waiting` older ones are queued. True: deliver it now; false: queue
   /// it behind them.
   [[nodiscard]] bool deliver_now(std::size_t waiting) noexcept
   {
      if (waiting > 0 || used_ >= per_slice_)
         return false;
      ++used_;
      return true;
   }

   /// True when a turn must be posted now, after a reply was delivered or queued: the slice is
   /// full and no turn is on its way. The turn comes behind what the delivered replies woke (the
   /// writer). Replies that come one at a time fill a slice too, over several turns: one post per
   /// `per_slice` replies, and the next one may wait for it.
   [[nodiscard]] bool turn_needed() noexcept
   {
      if (posted_ || used_ < per_slice_)
         return false;
      posted_ = true;
      return true;
   }

   /// The posted turn runs: a new slice begins. Returns how many of the `waiting` replies to
   /// deliver now, oldest first; then the caller asks turn_needed() again.
   [[nodiscard]] std::size_t on_turn(std::size_t waiting) noexcept
   {
      posted_ = false;
      used_ = waiting < per_slice_ ? waiting : per_slice_;
      return used_;
   }

   std::size_t per_slice() const noexcept { return per_slice_; }

private:
   std::size_t per_slice_;
   std::size_t used_ = 0;  // replies delivered in this slice
   bool posted_ = false;   // a turn is on its way
};

}  // namespace locksmith::detail

#endif
