#include "cli.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <utility>

namespace locksmith::test::cli {

using namespace std::chrono_literals;

std::string read_file(std::string const& path)
{
   std::ifstream in(path);
   std::ostringstream out;
   out << in.rdbuf();
   return out.str();
}

cli_process::cli_process(std::vector<std::string> args)
    : args_(std::move(args))
{
   args_.insert(args_.begin(), LOCKSMITH_CLI_PATH);
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
   // Whatever the test runner did to its own signals, the tool starts with the defaults.
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
      throw std::runtime_error(std::string("posix_spawn: ") + std::strerror(err));
}

cli_process::~cli_process()
{
   if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      int status;
      ::waitpid(pid_, &status, 0);
   }
}

int cli_process::wait(std::chrono::milliseconds limit)
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
         BOOST_FAIL("locksmith did not exit within " << limit.count() << " ms; stderr: " << err());
      }
      std::this_thread::sleep_for(5ms);
   }
   pid_ = -1;
   return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
}

std::vector<std::string> exec_args(redis_server const& srv, std::string const& key,
                                   std::vector<std::string> options,
                                   std::vector<std::string> const& command)
{
   std::vector<std::string> args{"exec", "--redis", srv.url(), "--key", key};
   args.insert(args.end(), options.begin(), options.end());
   args.push_back("--");
   args.insert(args.end(), command.begin(), command.end());
   return args;
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

std::optional<clock_type::time_point> appears_at(std::string const& path,
                                                 std::chrono::milliseconds limit)
{
   auto give_up = clock_type::now() + limit;
   while (!exists(path)) {
      if (clock_type::now() >= give_up)
         return std::nullopt;
      std::this_thread::sleep_for(1ms);
   }
   return clock_type::now();
}

long long ms_between(clock_type::time_point from, clock_type::time_point to)
{
   return std::chrono::duration_cast<std::chrono::milliseconds>(to - from).count();
}

std::string lock_key(std::string const& name)
{
   return "locksmith:{" + name + "}";
}

bool key_exists(redis_server const& srv, std::string const& name)
{
   return srv.text({"EXISTS", lock_key(name)}) == "1";
}

long long listeners(redis_server const& srv, std::string const& name)
{
   auto r = srv.command({"PUBSUB", "NUMSUB", lock_key(name) + ":released"});
   return r.elements.size() == 2 ? r.elements[1].integer : -1;
}

// `sh -c SCRIPT sh ARGS...`: the script sees ARGS as $1, $2...
std::vector<std::string> shell(std::string script, std::vector<std::string> const& args)
{
   std::vector<std::string> command{"sh", "-c", std::move(script), "sh"};
   command.insert(command.end(), args.begin(), args.end());
   return command;
}

std::vector<std::string> hold_until(temp_dir const& dir)
{
   return shell("touch \"$1\"; while [ ! -e \"$2\" ]; do sleep 0.01; done",
                {dir.file("ready"), dir.file("go")});
}

std::vector<std::string> trap_term(temp_dir const& dir, std::string const& seconds)
{
   return shell("trap ': > \"$2\"; kill $! 2>/dev/null; exit 3' TERM; echo $$ > \"$3\"; "
                "touch \"$1\"; sleep \"$4\" & wait $!",
                {dir.file("ready"), dir.file("termed"), dir.file("pid"), seconds});
}

std::vector<std::string> ignore_term(temp_dir const& dir)
{
   return shell("trap '' TERM; echo $$ > \"$2\"; touch \"$1\"; exec sleep 30",
                {dir.file("ready"), dir.file("pid")});
}

bool still_runs(std::string const& file)
{
   pid_t pid = std::stoi(read_file(file));
   return pid > 0 && (::kill(pid, 0) == 0 || errno != ESRCH);
}

void create_file(std::string const& path)
{
   std::ofstream{path} << "x";
}

bool exists(std::string const& path)
{
   return std::filesystem::exists(path);
}

long long count_lines(std::string const& text)
{
   return std::count(text.begin(), text.end(), '\n');
}

}  // namespace locksmith::test::cli
