// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
#include "netem.hpp"

#include <fcntl.h>
#include <sched.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

extern char** environ;

namespace locksmith::bench {
namespace {

std::string joined(std::vector<std::string> const& argv)
{
   std::string out;
   for (auto const& a : argv)
      out += (out.empty() ? "" : " ") + a;
   return out;
}

std::string read_all(int fd)
{
   std::string text;
   char buf[512];
   for (;;) {
      auto const n = ::read(fd, buf, sizeof buf);
      if (n < 0 && errno == EINTR)
         continue;
      if (n <= 0)
         break;
      text.append(buf, static_cast<std::size_t>(n));
   }
   while (!text.empty() && (text.back() == '\n' || text.back() == ' '))
      text.pop_back();
   return text;
}

}  // namespace

command_output run_command(std::vector<std::string> const& argv)
{
   int fds[2];
   if (::pipe2(fds, O_CLOEXEC) != 0)
      return {127, std::string{"pipe: "} + std::strerror(errno)};
   posix_spawn_file_actions_t actions;
   ::posix_spawn_file_actions_init(&actions);
   ::posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
   ::posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
   ::posix_spawn_file_actions_adddup2(&actions, fds[1], STDERR_FILENO);
   std::vector<char*> args;
   for (auto const& a : argv)
      args.push_back(const_cast<char*>(a.c_str()));
   args.push_back(nullptr);
   pid_t pid = -1;
   int const failed = ::posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
   ::posix_spawn_file_actions_destroy(&actions);
   ::close(fds[1]);
   if (failed != 0) {
      ::close(fds[0]);
      return {127, argv[0] + ": " + std::strerror(failed)};
   }
   command_output out{0, read_all(fds[0])};
   ::close(fds[0]);
   int status = 0;
   while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
   out.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128;
   return out;
}

netem_net::netem_net(int pairs)
    : name_{"locksmith-chaos-" + std::to_string(::getpid())}
    , tag_{"lsc" + std::to_string(::getpid())}
    , pairs_{pairs}
{}

std::unique_ptr<netem_net> netem_net::open(int pairs, std::string& why)
{
   if (::geteuid() != 0) {
      why = "not root";
      return nullptr;
   }
   std::unique_ptr<netem_net> net{new netem_net{pairs}};
   if (why = net->build(); !why.empty())
      return nullptr;
   // The kernel may lack the netem qdisc (sch_netem) although namespaces and veth work.
   std::vector<std::string> probe{"tc",   "qdisc", "add",   "dev", net->host_if(0),
                                  "root", "netem", "delay", "1ms"};
   if (auto const r = run_command(probe); r.status != 0) {
      why = joined(probe) + ": " + r.text;
      return nullptr;
   }
   run_command({"tc", "qdisc", "del", "dev", net->host_if(0), "root"});
   return net;
}

std::string netem_net::build()
{
   if (auto const r = run_command({"ip", "netns", "add", name_}); r.status != 0)
      return "ip netns add " + name_ + ": " + r.text;
   for (int i = 0; i < pairs_; ++i) {
      auto const n = static_cast<std::size_t>(i);
      auto const ns_address = "10.213." + std::to_string(i) + ".2/30";
      std::vector<std::string> const steps[] = {
         {"ip", "link", "add", host_if(n), "type", "veth", "peer", "name", ns_if(n), "netns",
          name_},
         {"ip", "addr", "add", host_address(n) + "/30", "dev", host_if(n)},
         {"ip", "link", "set", host_if(n), "up"},
         {"ip", "-n", name_, "addr", "add", ns_address, "dev", ns_if(n)},
         {"ip", "-n", name_, "link", "set", ns_if(n), "up"}};
      for (auto const& argv : steps)
         if (auto const r = run_command(argv); r.status != 0)
            return joined(argv) + ": " + r.text;
   }
   return {};
}

netem_net::~netem_net()
{
   // Removing one end of a veth pair removes the other; what was never made just fails.
   for (int i = 0; i < pairs_; ++i)
      run_command({"ip", "link", "del", host_if(static_cast<std::size_t>(i))});
   run_command({"ip", "netns", "del", name_});
}

std::string netem_net::host_address(std::size_t i) const
{
   return "10.213." + std::to_string(i) + ".1";
}

bool netem_net::enter() const
{
   int const fd = ::open(("/run/netns/" + name_).c_str(), O_RDONLY | O_CLOEXEC);
   bool const ok = fd >= 0 && ::setns(fd, CLONE_NEWNET) == 0;
   if (fd >= 0)
      ::close(fd);
   return ok;
}

bool netem_net::set_delay(std::size_t i, std::chrono::microseconds d)
{
   bool ok = true;
   for (bool const inside : {false, true}) {
      std::vector<std::string> argv{"tc"};
      if (inside)
         argv.insert(argv.end(), {"-n", name_});
      argv.insert(argv.end(), {"qdisc", d.count() > 0 ? "replace" : "del", "dev",
                               inside ? ns_if(i) : host_if(i), "root"});
      if (d.count() > 0)
         argv.insert(argv.end(), {"netem", "delay", std::to_string(d.count()) + "us"});
      ok = run_command(argv).status == 0 && ok;
   }
   return ok;
}

}  // namespace locksmith::bench
