// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
#ifndef LOCKSMITH_DETAIL_SILENCE_GATE_HPP
#define LOCKSMITH_DETAIL_SILENCE_GATE_HPP

namespace locksmith::detail {

/// Whether a node is fed new calls. Once a call of ours has timed out, the node is silent: new
/// calls are refused at once instead of being queued behind those it has not answered (a frozen
/// server answers none of them, and each one queued costs the client CPU until it does), and a
/// single probe waits for its answer. Any answer, the probe's or that of a call sent earlier,
/// opens the gate again: a node that was only slow is fed again as soon as it catches up. No
/// I/O: the node sends the probe when told to.
class silence_gate {
public:
   /// True while calls may be sent.
   bool open() const noexcept { return !silent_; }

   /// A call timed out. True when a probe must be sent now: the gate just closed and no probe is
   /// on its way.
   [[nodiscard]] bool on_timeout() noexcept
   {
      silent_ = true;
      return start_probe();
   }

   /// The probe came back: answered (the gate opens) or failed (the connection dropped it). True
   /// when a new probe must be sent: the node is still silent.
   [[nodiscard]] bool on_probe(bool answered) noexcept
   {
      probing_ = false;
      if (answered)
         silent_ = false;
      return silent_ && start_probe();
   }

   /// A call sent earlier was answered: the node is not frozen. A probe on its way stays so.
   void on_answer() noexcept { silent_ = false; }

   bool probing() const noexcept { return probing_; }

private:
   bool start_probe() noexcept
   {
      if (probing_)
         return false;
      probing_ = true;
      return true;
   }

   bool silent_ = false;
   bool probing_ = false;
};

}  // namespace locksmith::detail

#endif
