#include "support/redis_server.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <thread>

namespace locksmith::test {
namespace {

using clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

// Long enough for a loaded CI machine to start redis, short enough to fail a broken setup quickly.
constexpr auto start_timeout = 5s;
constexpr int max_start_attempts = 10;

[[noreturn]] void throw_errno(const std::string& what)
{
   throw std::runtime_error(what + ": " + std::strerror(errno));
}

// Only async-signal-safe calls between fork and exec: everything is prepared by the parent.
[[noreturn]] void exec_child(pid_t parent, const char* path, char* const* argv, int max_fd)
{
   // Die with the test binary; re-check the parent in case it died before prctl took effect.
   if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || ::getppid() != parent)
      ::_exit(126);
   sigset_t none;
   ::sigemptyset(&none);
   ::sigprocmask(SIG_SETMASK, &none, nullptr);  // a test that blocks signals must not deafen redis
   int devnull = ::open("/dev/null", O_RDWR);
   if (devnull < 0)
      ::_exit(126);
   ::dup2(devnull, STDIN_FILENO);
   ::dup2(devnull, STDOUT_FILENO);
   ::dup2(devnull, STDERR_FILENO);
   // An inherited copy of a test's client socket would keep that connection open after the test
   // closes it, so the server it talks to would never see the disconnect.
   if (::close_range(3, ~0U, 0) != 0) {
      for (int fd = 3; fd < max_fd; ++fd)
         ::close(fd);
   }
   ::execv(path, argv);
   ::_exit(127);
}

pid_t spawn(const std::vector<std::string>& args)
{
   std::vector<char*> argv;
   for (const auto& a : args)
      argv.push_back(const_cast<char*>(a.c_str()));
   argv.push_back(nullptr);
   rlimit limit{};
   int max_fd = ::getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < 65536
                   ? static_cast<int>(limit.rlim_cur)
                   : 65536;
   pid_t parent = ::getpid();
   pid_t pid = ::fork();
   if (pid < 0)
      throw_errno("fork");
   if (pid == 0)
      exec_child(parent, argv[0], argv.data(), max_fd);
   return pid;
}

// Returns the wait status.
int reap(pid_t pid) noexcept
{
   int status = 0;
   while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
   return status;
}

std::string describe_status(int status)
{
   if (WIFEXITED(status))
      return "exited with status " + std::to_string(WEXITSTATUS(status));
   if (WIFSIGNALED(status))
      return "killed by signal " + std::to_string(WTERMSIG(status));
   return "stopped";
}

}  // namespace

// Resolved in the parent because execvp may allocate, which a child forked from a multithreaded
// process must not do.
std::optional<std::string> find_redis_server()
{
   // scripts/test.sh --server NAME names one of the matrix's servers (scripts/servers.sh).
   if (const char* chosen = std::getenv("LOCKSMITH_REDIS_SERVER"); chosen && *chosen) {
      if (::access(chosen, X_OK) == 0)
         return std::string{chosen};
      return std::nullopt;
   }
   const char* path = std::getenv("PATH");
   std::string_view rest = path ? path : "/usr/local/bin:/usr/bin:/bin";
   while (!rest.empty()) {
      auto colon = rest.find(':');
      std::string candidate = std::string(rest.substr(0, colon)) + "/redis-server";
      if (::access(candidate.c_str(), X_OK) == 0)
         return candidate;
      rest = colon == std::string_view::npos ? std::string_view{} : rest.substr(colon + 1);
   }
   return std::nullopt;
}

// Asks the kernel for a free loopback port. The port is released again before redis binds it, so
// another process may take it in between; the callers retry on a new port when that happens.
std::uint16_t free_loopback_port()
{
   int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
   if (fd < 0)
      throw_errno("socket");
   sockaddr_in addr{};
   addr.sin_family = AF_INET;
   addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
   socklen_t len = sizeof addr;
   bool ok = ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
             ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0;
   int saved = errno;
   ::close(fd);
   errno = saved;
   if (!ok)
      throw_errno("bind 127.0.0.1:0");
   return ntohs(addr.sin_port);
}

redis_server::redis_server(std::vector<std::string> extra_args, std::string config_file)
    : extra_args_(std::move(extra_args))
    , config_file_(std::move(config_file))
{
   std::string last_exit;
   for (int attempt = 0; attempt < max_start_attempts; ++attempt) {
      port_ = free_loopback_port();
      int status = 0;
      start_result result{};
      try {
         result = try_start(clock::now() + start_timeout, status);
      } catch (...) {
         kill();  // no destructor runs for a half-constructed object
         throw;
      }
      switch (result) {
      case start_result::ready:
         return;
      case start_result::timed_out:
         throw std::runtime_error("redis-server did not answer PING within 5 s: " + command_line());
      case start_result::exited:
         last_exit = describe_status(status);
         break;
      }
   }
   throw std::runtime_error("redis-server " + last_exit + " on " +
                            std::to_string(max_start_attempts) +
                            " different ports; run it by hand to see its log: " + command_line());
}

redis_server::~redis_server()
{
   kill();
}

std::string redis_server::url() const
{
   return "redis://127.0.0.1:" + std::to_string(port_);
}

bool redis_server::running() const
{
   if (pid_ <= 0)
      return false;
   siginfo_t info{};
   // WNOWAIT: only look, so that kill() or the destructor still reaps the process.
   int rc = ::waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT);
   return rc == 0 && info.si_pid == 0;
}

void redis_server::pause()
{
   if (pid_ <= 0)
      throw std::logic_error("redis_server::pause: the server is not running");
   ::kill(pid_, SIGSTOP);
   // SIGSTOP is asynchronous; wait until every thread has stopped so no later command gets an
   // answer.
   siginfo_t info{};
   while (::waitid(P_PID, static_cast<id_t>(pid_), &info, WSTOPPED | WEXITED | WNOWAIT) < 0 &&
          errno == EINTR) {}
}

void redis_server::resume()
{
   if (pid_ > 0)
      ::kill(pid_, SIGCONT);
}

void redis_server::kill() noexcept
{
   if (pid_ <= 0)
      return;
   ::kill(pid_, SIGCONT);
   ::kill(pid_, SIGKILL);  // also works on a stopped process
   reap(pid_);
   pid_ = -1;
}

void redis_server::restart()
{
   restart(false);
}

void redis_server::restart_loading()
{
   restart(true);
}

void redis_server::restart(bool loading)
{
   kill();
   // Redis sets SO_REUSEADDR, so TIME_WAIT alone does not block the port; retry anyway in case the
   // old listening socket has not been torn down yet.
   auto give_up = clock::now() + start_timeout;
   for (;;) {
      int status = 0;
      switch (try_start(clock::now() + start_timeout, status, loading)) {
      case start_result::ready:
         return;
      case start_result::timed_out:
         throw std::runtime_error("restarted redis-server did not answer PING within 5 s: " +
                                  command_line());
      case start_result::exited:
         if (clock::now() >= give_up)
            throw std::runtime_error("redis-server could not restart on port " +
                                     std::to_string(port_) + " within 5 s (" +
                                     describe_status(status) + "): " + command_line());
         std::this_thread::sleep_for(20ms);
      }
   }
}

redis_server::start_result redis_server::try_start(clock::time_point deadline, int& status,
                                                   bool loading)
{
   static const std::string executable = [] {
      auto found = find_redis_server();
      if (!found)
         throw std::runtime_error("redis-server not found (LOCKSMITH_REDIS_SERVER, else PATH)");
      return *found;
   }();
   std::vector<std::string> args{executable};
   if (!config_file_.empty())
      args.push_back(config_file_);
   args.insert(args.end(), {"--port", std::to_string(port_), "--bind", "127.0.0.1", "--save", "",
                            "--appendonly", "no", "--daemonize", "no"});
   args.insert(args.end(), extra_args_.begin(), extra_args_.end());
   pid_ = spawn(args);
   for (;;) {
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
         pid_ = -1;
         if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
            throw std::runtime_error("could not execute " + executable);
         return start_result::exited;  // most likely the port was taken; the caller decides
      }
      if (answers_ping_from_our_pid(deadline, loading))
         return start_result::ready;
      if (clock::now() >= deadline) {
         kill();
         return start_result::timed_out;
      }
      std::this_thread::sleep_for(5ms);
   }
}

// PONG alone is not enough: if another process grabbed the port first, its server answers while
// ours is about to exit on a bind error.
bool redis_server::answers_ping_from_our_pid(clock::time_point deadline, bool loading) const
{
   auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - clock::now());
   if (left <= 0ms)
      return false;
   try {
      reply pong = command({"PING"}, left);
      bool const still_loading = pong.type == reply::kind::error && pong.str.starts_with("LOADING");
      if (!(pong.type == reply::kind::status && pong.str == "PONG") && !(loading && still_loading))
         return false;
      std::string info = command({"INFO", "server"}, left).str;
      return info.find("\r\nprocess_id:" + std::to_string(pid_) + "\r\n") != std::string::npos;
   } catch (const std::runtime_error&) {
      return false;  // not listening yet
   }
}

std::string redis_server::command_line() const
{
   std::string line = "redis-server " + (config_file_.empty() ? "" : config_file_ + " ") +
                      "--port " + std::to_string(port_) +
                      " --bind 127.0.0.1 --save '' --appendonly no --daemonize no";
   for (const auto& a : extra_args_)
      line += " '" + a + "'";
   return line;
}

reply redis_server::command(std::initializer_list<std::string_view> args,
                            std::chrono::milliseconds timeout) const
{
   return blocking_client("127.0.0.1", std::to_string(port_), timeout).command(args);
}

reply redis_server::command(const std::vector<std::string>& args,
                            std::chrono::milliseconds timeout) const
{
   return blocking_client("127.0.0.1", std::to_string(port_), timeout).command(args);
}

std::string redis_server::text(std::initializer_list<std::string_view> args,
                               std::chrono::milliseconds timeout) const
{
   return reply_text(command(args, timeout));
}

command_stats redis_server::commandstats() const
{
   return parse_command_stats(text({"INFO", "commandstats"}));
}

}  // namespace locksmith::test
