#include "support/spawned_process.hpp"

#include <boost/test/unit_test.hpp>

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <utility>

namespace locksmith::test {

using namespace std::chrono_literals;
using clock_type = std::chrono::steady_clock;

std::string read_file(std::string const& path)
{
   std::ifstream in(path);
   std::ostringstream out;
   out << in.rdbuf();
   return out.str();
}

bool poll_until(std::function<bool()> const& condition, std::chrono::milliseconds limit)
{
   auto give_up = clock_type::now() + limit;
   while (!condition()) {
      if (clock_type::now() >= give_up)
         return false;
      std::this_thread::sleep_for(5ms);
   }
   return true;
}

spawned_process::spawned_process(std::string program, std::vector<std::string> args)
    : args_(std::move(args))
{
   args_.insert(args_.begin(), std::move(program));
   std::vector<char*> argv;
   for (auto& a : args_)
      argv.push_back(a.data());
   argv.push_back(nullptr);
   posix_spawn_file_actions_t files;
   ::posix_spawn_file_actions_init(&files);
   ::posix_spawn_file_actions_addopen(&files, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
   ::posix_spawn_file_actions_addopen(&files, STDOUT_FILENO, out_.file("stdout").c_str(),
                                      O_WRONLY | O_CREAT | O_TRUNC, 0600);
   ::posix_spawn_file_actions_addopen(&files, STDERR_FILENO, out_.file("stderr").c_str(),
                                      O_WRONLY | O_CREAT | O_TRUNC, 0600);
   // Whatever the test runner did to its own signals, the program starts with the defaults.
   posix_spawnattr_t attr;
   ::posix_spawnattr_init(&attr);
   sigset_t none, defaults;
   ::sigemptyset(&none);
   ::sigemptyset(&defaults);
   for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGCHLD})
      ::sigaddset(&defaults, sig);
   ::posix_spawnattr_setsigmask(&attr, &none);
   ::posix_spawnattr_setsigdefault(&attr, &defaults);
   ::posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
   int err = ::posix_spawn(&pid_, argv[0], &files, &attr, argv.data(), environ);
   ::posix_spawnattr_destroy(&attr);
   ::posix_spawn_file_actions_destroy(&files);
   if (err != 0)
      throw std::runtime_error("posix_spawn " + args_[0] + ": " + std::strerror(err));
}

spawned_process::~spawned_process()
{
   if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      int status;
      ::waitpid(pid_, &status, 0);
   }
}

int spawned_process::wait(std::chrono::milliseconds limit)
{
   auto give_up = clock_type::now() + limit;
   int status = 0;
   for (;;) {
      pid_t r = ::waitpid(pid_, &status, WNOHANG);
      if (r == pid_)
         break;
      if (r < 0 && errno != EINTR)
         throw std::runtime_error("waitpid failed");
      if (clock_type::now() >= give_up) {
         ::kill(pid_, SIGKILL);
         ::waitpid(pid_, &status, 0);
         pid_ = -1;
         BOOST_FAIL(std::filesystem::path(args_[0]).filename().string()
                    << " did not exit within " << limit.count() << " ms; stderr: " << err()
                    << "; stdout: " << out());
      }
      std::this_thread::sleep_for(5ms);
   }
   pid_ = -1;
   return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
}

}  // namespace locksmith::test
