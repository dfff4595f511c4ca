// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
#include "server.hpp"

#include <locksmith/detail/url.hpp>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <chrono>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace locksmith::bench {
namespace {

using namespace std::chrono_literals;

// Asks the kernel for a free loopback port. It is free again before redis binds it, so another
// process may take it in between: the caller then tries another one.
int pick_free_port()
{
   int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
   sockaddr_in addr{};
   addr.sin_family = AF_INET;
   addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
   socklen_t len = sizeof addr;
   bool const ok = fd >= 0 && ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
                   ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0;
   if (fd >= 0)
      ::close(fd);
   if (!ok)
      throw std::runtime_error("cannot find a free loopback port");
   return ntohs(addr.sin_port);
}

// A connected blocking socket whose every send and receive gives up after two seconds.
int connect_to(std::string const& host, std::string const& port)
{
   addrinfo hints{};
   hints.ai_socktype = SOCK_STREAM;
   addrinfo* found = nullptr;
   if (::getaddrinfo(host.c_str(), port.c_str(), &hints, &found) != 0)
      return -1;
   int fd = -1;
   for (auto* a = found; a && fd < 0; a = a->ai_next) {
      fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
      if (fd < 0)
         continue;
      timeval tv{2, 0};
      ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
      ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
      if (::connect(fd, a->ai_addr, a->ai_addrlen) != 0) {
         ::close(fd);
         fd = -1;
      }
   }
   ::freeaddrinfo(found);
   return fd;
}

std::string encode(std::vector<std::string> const& args)
{
   std::string out = "*" + std::to_string(args.size()) + "\r\n";
   for (auto const& a : args)
      out += "$" + std::to_string(a.size()) + "\r\n" + a + "\r\n";
   return out;
}

// Reads one RESP2 reply that is a status, an error, an integer or a bulk string.
std::optional<std::string> read_reply(int fd)
{
   std::string buf;
   char chunk[16384];
   for (;;) {
      auto const eol = buf.find("\r\n");
      if (eol != std::string::npos && buf[0] != '$')
         return buf[0] == '-' ? buf.substr(0, eol) : buf.substr(1, eol - 1);
      if (eol != std::string::npos) {
         long long n = 0;
         std::from_chars(buf.data() + 1, buf.data() + eol, n);
         if (n < 0)
            return std::string{};
         if (buf.size() >= eol + 2 + static_cast<std::size_t>(n) + 2)
            return buf.substr(eol + 2, static_cast<std::size_t>(n));
      }
      auto const k = ::recv(fd, chunk, sizeof chunk, 0);
      if (k < 0 && errno == EINTR)
         continue;
      if (k <= 0)
         return std::nullopt;
      buf.append(chunk, static_cast<std::size_t>(k));
   }
}

std::optional<std::string> exchange(int fd, std::vector<std::string> const& args)
{
   auto const out = encode(args);
   if (::send(fd, out.data(), out.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(out.size()))
      return std::nullopt;
   return read_reply(fd);
}

// The number after `name=` in "cmdstat_get:calls=3,usec=...,failed_calls=0", or 0.
std::int64_t stat_field(std::string const& line, std::string_view name)
{
   for (auto at = line.find(name); at != std::string::npos; at = line.find(name, at + 1)) {
      if (at == 0 || (line[at - 1] != ':' && line[at - 1] != ',')) // as in "failed_calls="
         continue;
      std::int64_t n = 0;
      std::from_chars(line.data() + at + name.size(), line.data() + line.size(), n);
      return n;
   }
   return 0;
}

// "cmdstat_get:calls=3,usec=...,rejected_calls=0,failed_calls=0" lines, added to `stats`.
void add_command_stats(std::string const& info, std::map<std::string, command_stat>& stats)
{
   std::istringstream in{info};
   std::string line;
   while (std::getline(in, line)) {
      constexpr std::string_view head = "cmdstat_";
      auto const colon = line.find(':');
      if (!line.starts_with(head) || colon == std::string::npos)
         continue;
      auto& st = stats[line.substr(head.size(), colon - head.size())];
      st.calls += stat_field(line, "calls=");
      st.failed += stat_field(line, "failed_calls=");
   }
}

} // namespace

std::optional<std::string> blocking_command(std::string const& url,
                                            std::vector<std::string> const& args)
{
   auto const u = detail::parse_url(url);
   if (!u || u->tls)
      return std::nullopt;
   int const fd = connect_to(u->host, u->port);
   if (fd < 0)
      return std::nullopt;
   std::optional<std::string> reply = std::string{};
   if (!u->password.empty()) {
      auto auth = u->user.empty() ? std::vector<std::string>{"AUTH", u->password}
                                  : std::vector<std::string>{"AUTH", u->user, u->password};
      reply = exchange(fd, auth);
   }
   if (reply && !reply->starts_with("-"))
      reply = exchange(fd, args);
   ::close(fd);
   return reply;
}

std::optional<std::map<std::string, command_stat>>
command_stats(std::vector<std::string> const& urls)
{
   std::map<std::string, command_stat> stats;
   for (auto const& url : urls) {
      auto const info = blocking_command(url, {"INFO", "commandstats"});
      if (!info || info->starts_with("-"))
         return std::nullopt;
      add_command_stats(*info, stats);
   }
   return stats;
}

std::optional<std::map<std::string, std::int64_t>>
command_calls(std::vector<std::string> const& urls)
{
   auto const stats = command_stats(urls);
   if (!stats)
      return std::nullopt;
   std::map<std::string, std::int64_t> calls;
   for (auto const& [name, st] : *stats)
      calls[name] = st.calls;
   return calls;
}

std::optional<double> process_cpu_ms(pid_t pid)
{
   std::ifstream in{"/proc/" + std::to_string(pid) + "/stat"};
   std::string text{std::istreambuf_iterator<char>{in}, {}};
   // The command name, field 2, is in parentheses and may hold spaces: count from its end.
   auto const close = text.rfind(')');
   if (close == std::string::npos)
      return std::nullopt;
   std::istringstream fields{text.substr(close + 2)};
   std::string skip;
   for (int field = 3; field < 14; ++field)
      fields >> skip;
   long long utime = 0, stime = 0;
   if (!(fields >> utime >> stime))
      return std::nullopt;
   return static_cast<double>(utime + stime) * 1000.0 / static_cast<double>(::sysconf(_SC_CLK_TCK));
}

redis_process::redis_process(std::string also_bind)
: also_bind_{std::move(also_bind)}
{
   for (int attempt = 0; attempt < 10; ++attempt)
      if (try_start())
         return;
   throw std::runtime_error(
       "could not start redis-server on a free loopback port (is it in PATH?)");
}

redis_process::~redis_process()
{
   stop();
}

bool redis_process::try_start(int port_wanted)
{
   port_ = port_wanted != 0 ? port_wanted : pick_free_port();
   auto const port = std::to_string(port_);
   std::vector<char const*> argv{"redis-server", "--port", port.c_str(), "--bind", "127.0.0.1"};
   if (!also_bind_.empty())
      argv.insert(argv.end(), {also_bind_.c_str(), "--protected-mode", "no"});
   argv.insert(argv.end(), {"--save", "", "--appendonly", "no", nullptr});
   pid_t const parent = ::getpid();
   pid_ = ::fork();
   if (pid_ < 0)
      throw std::runtime_error("fork failed");
   if (pid_ == 0) {
      // Only async-signal-safe calls here. Die with the harness.
      if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || ::getppid() != parent)
         ::_exit(126);
      int const devnull = ::open("/dev/null", O_RDWR);
      ::dup2(devnull, STDIN_FILENO);
      ::dup2(devnull, STDOUT_FILENO);
      ::dup2(devnull, STDERR_FILENO);
      ::execvp(argv[0], const_cast<char* const*>(argv.data()));
      ::_exit(127);
   }
   auto const deadline = std::chrono::steady_clock::now() + 5s;
   while (std::chrono::steady_clock::now() < deadline) {
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
         pid_ = -1;
         if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
            throw std::runtime_error("could not execute redis-server (is it in PATH?)");
         return false; // most likely the port was taken meanwhile
      }
      // PONG alone is not enough: another server may have taken the port before ours.
      auto const info = blocking_command(url(), {"INFO", "server"});
      if (info &&
          info->find("\r\nprocess_id:" + std::to_string(pid_) + "\r\n") != std::string::npos)
         return true;
      std::this_thread::sleep_for(10ms);
   }
   stop();
   throw std::runtime_error("redis-server did not answer PING within 5 s");
}

void redis_process::pause()
{
   if (pid_ <= 0)
      return;
   ::kill(pid_, SIGSTOP);
   // SIGSTOP is asynchronous: wait until the server has stopped, so that nothing sent later is
   // answered. WNOWAIT leaves the status for the waitpid of stop().
   siginfo_t info{};
   while (::waitid(P_PID, static_cast<id_t>(pid_), &info, WSTOPPED | WEXITED | WNOWAIT) < 0 &&
          errno == EINTR) {
   }
}

void redis_process::resume()
{
   if (pid_ <= 0)
      return;
   ::kill(pid_, SIGCONT);
   auto const deadline = std::chrono::steady_clock::now() + 10s;
   while (blocking_command(url(), {"PING"}) != std::optional<std::string>{"PONG"}) {
      if (std::chrono::steady_clock::now() >= deadline)
         throw std::runtime_error("redis-server did not answer PING within 10 s of SIGCONT");
      std::this_thread::sleep_for(10ms);
   }
}

void redis_process::restart()
{
   auto const port = port_;
   stop();
   auto const deadline = std::chrono::steady_clock::now() + 10s;
   while (!try_start(port)) {  // the port may take a moment to be free again
      if (std::chrono::steady_clock::now() >= deadline)
         throw std::runtime_error("redis-server did not come back on its port within 10 s");
      std::this_thread::sleep_for(20ms);
   }
}

void redis_process::stop() noexcept
{
   if (pid_ <= 0)
      return;
   ::kill(pid_, SIGCONT); // SIGKILL would end a frozen server too, but resume it first
   ::kill(pid_, SIGKILL); // nothing to save: persistence is off
   int status = 0;
   while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
   }
   pid_ = -1;
}

} // namespace locksmith::bench
