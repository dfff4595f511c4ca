// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
#include "child_process.hpp"

#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/system/system_error.hpp>

#include <dirent.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <csignal>
#include <string_view>

extern char** environ;

namespace locksmith::cli {
namespace asio = boost::asio;

namespace {

// The inherited environment, minus the variables that `env` sets, plus `env`.
std::vector<std::string> child_environment(env_overrides const& env)
{
   std::vector<std::string> out;
   for (char** e = environ; *e != nullptr; ++e) {
      std::string_view entry{*e};
      bool const overridden = std::any_of(env.begin(), env.end(), [&](auto const& kv) {
         return entry.starts_with(kv.first) && entry.substr(kv.first.size()).starts_with('=');
      });
      if (!overridden)
         out.emplace_back(entry);
   }
   for (auto const& [name, value] : env)
      out.push_back(name + "=" + value);
   return out;
}

// The NULL-terminated array of C strings that posix_spawn wants; it points into `v`.
std::vector<char*> c_strings(std::vector<std::string>& v)
{
   std::vector<char*> out;
   for (auto& s : v)
      out.push_back(s.data());
   out.push_back(nullptr);
   return out;
}

// waitpid, retried when a signal handler interrupts it.
int reap(pid_t pid, int flags, int& status)
{
   int r;
   do
      r = ::waitpid(pid, &status, flags);
   while (r < 0 && errno == EINTR);
   if (r < 0)
      throw boost::system::system_error{errno, boost::system::system_category(), "waitpid"};
   return r;
}

// Marks the descriptors opened by this process since start-up close-on-exec: Asio does not create
// its sockets with SOCK_CLOEXEC, and CMD (or a daemon it starts) must not keep our connections.
void close_ours_on_exec(std::vector<int> const& inherited)
{
   auto const now = open_descriptors();
   if (!now)
      return;
   for (int fd : *now)
      if (fd > STDERR_FILENO && std::count(inherited.begin(), inherited.end(), fd) == 0)
         ::fcntl(fd, F_SETFD, ::fcntl(fd, F_GETFD) | FD_CLOEXEC);
}

// Where pidfd_open fails (kernels before 5.3, for instance): wait for SIGCHLD instead.
asio::awaitable<int> wait_by_sigchld(pid_t pid)
{
   // Registered before the first check: a SIGCHLD that comes in between is queued, not lost.
   asio::signal_set sigchld{co_await asio::this_coro::executor, SIGCHLD};
   int status = 0;
   while (reap(pid, WNOHANG, status) == 0)
      co_await sigchld.async_wait(asio::use_awaitable);
   co_return status;
}

}  // namespace

std::optional<std::vector<int>> open_descriptors()
{
   DIR* dir = ::opendir("/proc/self/fd");
   if (dir == nullptr)
      return std::nullopt;
   std::vector<int> fds;
   while (dirent const* entry = ::readdir(dir)) {
      int fd = -1;
      std::string_view name{entry->d_name};
      auto const [end, ec] = std::from_chars(name.data(), name.data() + name.size(), fd);
      // Skip ".", ".." and the descriptor of the listing itself.
      if (ec == std::errc{} && end == name.data() + name.size() && fd != ::dirfd(dir))
         fds.push_back(fd);
   }
   ::closedir(dir);
   return fds;
}

spawn_result spawn_command(std::vector<std::string> const& argv, env_overrides const& env,
                           std::optional<std::vector<int>> const& inherited)
{
   if (inherited)
      close_ours_on_exec(*inherited);
   auto args = argv;
   auto envs = child_environment(env);
   auto arg_ptrs = c_strings(args);
   auto env_ptrs = c_strings(envs);
   pid_t pid = -1;
   // glibc's posix_spawnp reports a failed exec (ENOENT, EACCES...) as its result.
   int const err =
      ::posix_spawnp(&pid, arg_ptrs[0], nullptr, nullptr, arg_ptrs.data(), env_ptrs.data());
   if (err != 0)
      return {-1, err};
   return {pid, 0};
}

asio::awaitable<int> async_wait_exit(pid_t pid)
{
   int const fd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
   if (fd < 0)
      co_return co_await wait_by_sigchld(pid);  // no pidfd (old kernel, seccomp, out of fds)
   asio::posix::stream_descriptor pidfd{co_await asio::this_coro::executor, fd};
   // A pidfd becomes readable when the process exits; reaping it then does not block.
   co_await pidfd.async_wait(asio::posix::stream_descriptor::wait_read, asio::use_awaitable);
   int status = 0;
   reap(pid, 0, status);
   co_return status;
}

int exit_code_of(int wait_status) noexcept
{
   if (WIFSIGNALED(wait_status))
      return 128 + WTERMSIG(wait_status);
   return WEXITSTATUS(wait_status);
}

}  // namespace locksmith::cli
