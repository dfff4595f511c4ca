// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
// Network delay with tc netem, in a network namespace of the chaos kit's own: the workers run in
// it and reach each node over a veth pair of that node's, on which a delay fault adds netem.
#ifndef LOCKSMITH_CHAOS_NETEM_HPP
#define LOCKSMITH_CHAOS_NETEM_HPP

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

namespace locksmith::bench {

/// What a command printed (stdout and stderr) and its exit status.
struct command_output {
   int status = 127;  // 127: it could not be run
   std::string text;
};

/// Runs `argv` (argv[0] looked up in PATH, no shell) with stdin from /dev/null, and waits.
command_output run_command(std::vector<std::string> const& argv);

/// The namespace `locksmith-chaos-<pid>` and veth pairs `lsc<pid>h<i>` (here, 10.213.<i>.1/30)
/// and `lsc<pid>n<i>` (in the namespace, 10.213.<i>.2/30). The destructor removes them all.
class netem_net {
public:
   /// Sets up `pairs` veth pairs (at most 250) and checks that a netem qdisc can be added on one.
   /// Empty when it cannot be used, with the reason in `why` (not root, no ip or tc, no netem in
   /// the kernel); nothing is left behind then.
   static std::unique_ptr<netem_net> open(int pairs, std::string& why);

   ~netem_net();
   netem_net(netem_net const&) = delete;
   netem_net& operator=(netem_net const&) = delete;

   /// Pair i's address on this side, where a server must listen for the namespace to reach it.
   std::string host_address(std::size_t i) const;

   /// Moves the calling process into the namespace: for a forked worker, before it makes sockets.
   bool enter() const;

   /// Delays each packet that leaves either end of pair i by `d`; zero removes the delay.
   /// False when tc failed.
   bool set_delay(std::size_t i, std::chrono::microseconds d);

private:
   explicit netem_net(int pairs);
   std::string build();  // empty, or what failed
   std::string host_if(std::size_t i) const { return tag_ + "h" + std::to_string(i); }
   std::string ns_if(std::size_t i) const { return tag_ + "n" + std::to_string(i); }

   std::string name_, tag_;
   int pairs_;
};

}  // namespace locksmith::bench

#endif
