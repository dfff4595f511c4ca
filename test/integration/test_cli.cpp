// The `locksmith exec` command-line tool, run as a process against a real redis-server.
#include "support/keys.hpp"
#include "support/redis_server.hpp"
#include "support/tls_certs.hpp"

#include <boost/test/unit_test.hpp>

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace fs = std::filesystem;
namespace utf = boost::unit_test;
using namespace std::chrono_literals;
using locksmith::test::redis_server;
using locksmith::test::unique_key;

namespace {

using clock_type = std::chrono::steady_clock;

// A fresh directory for one test's files, removed at the end.
struct temp_dir {
  fs::path path;
  temp_dir() {
    std::string tmpl = (fs::temp_directory_path() / "locksmith-cli-XXXXXX").string();
    if (::mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path = tmpl;
  }
  ~temp_dir() {
    std::error_code ignored;
    fs::remove_all(path, ignored);
  }
  std::string file(const std::string& name) const { return (path / name).string(); }
};

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

// One run of the locksmith binary, its stdout and stderr captured in files. The destructor kills
// and reaps it if it still runs, so no process outlives its test.
class cli_process {
public:
  explicit cli_process(std::vector<std::string> args) : args_(std::move(args)) {
    args_.insert(args_.begin(), LOCKSMITH_CLI_PATH);
    std::vector<char*> argv;
    for (auto& a : args_) argv.push_back(a.data());
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
    for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGCHLD}) ::sigaddset(&defaults, sig);
    ::posix_spawnattr_setsigmask(&attr, &none);
    ::posix_spawnattr_setsigdefault(&attr, &defaults);
    ::posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    int err = ::posix_spawn(&pid_, argv[0], &files, &attr, argv.data(), environ);
    ::posix_spawnattr_destroy(&attr);
    ::posix_spawn_file_actions_destroy(&files);
    if (err != 0) throw std::runtime_error(std::string("posix_spawn: ") + std::strerror(err));
  }

  ~cli_process() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      int status;
      ::waitpid(pid_, &status, 0);
    }
  }

  cli_process(const cli_process&) = delete;
  cli_process& operator=(const cli_process&) = delete;

  pid_t pid() const { return pid_; }

  // Waits for the exit and returns the exit code (128+N for death by signal N). Fails the test,
  // killing the process, if it does not exit within `limit`.
  int wait(std::chrono::milliseconds limit = 20s) {
    auto give_up = clock_type::now() + limit;
    int status = 0;
    for (;;) {
      pid_t r = ::waitpid(pid_, &status, WNOHANG);
      if (r == pid_) break;
      if (r < 0 && errno != EINTR) throw std::runtime_error("waitpid failed");
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

  std::string out() const { return read_file(out_.file("stdout")); }
  std::string err() const { return read_file(out_.file("stderr")); }

private:
  std::vector<std::string> args_;
  temp_dir out_;
  pid_t pid_ = -1;
};

// `locksmith exec --redis URL --key KEY <options...> -- <command...>`
std::vector<std::string> exec_args(const redis_server& srv, const std::string& key,
                                   std::vector<std::string> options,
                                   const std::vector<std::string>& command) {
  std::vector<std::string> args{"exec", "--redis", srv.url(), "--key", key};
  args.insert(args.end(), options.begin(), options.end());
  args.push_back("--");
  args.insert(args.end(), command.begin(), command.end());
  return args;
}

// Polls `condition` until it holds or `limit` passes; returns whether it held.
template <class Condition>
bool eventually(Condition condition, std::chrono::milliseconds limit = 10s) {
  auto give_up = clock_type::now() + limit;
  while (!condition()) {
    if (clock_type::now() >= give_up) return false;
    std::this_thread::sleep_for(5ms);
  }
  return true;
}

long long ms_since(clock_type::time_point t0) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(clock_type::now() - t0).count();
}

std::string lock_key(const std::string& name) { return "locksmith:{" + name + "}"; }

bool key_exists(const redis_server& srv, const std::string& name) {
  return srv.text({"EXISTS", lock_key(name)}) == "1";
}

// How many clients listen for the release of the lock `name` (waiters with --strategy subscribe).
long long listeners(const redis_server& srv, const std::string& name) {
  auto r = srv.command({"PUBSUB", "NUMSUB", lock_key(name) + ":released"});
  return r.elements.size() == 2 ? r.elements[1].integer : -1;
}

// A command that says it runs (creates `ready`), then runs until `go` exists.
std::vector<std::string> hold_until(const temp_dir& dir) {
  return {"sh", "-c", "touch \"$1\"; while [ ! -e \"$2\" ]; do sleep 0.01; done", "sh",
          dir.file("ready"), dir.file("go")};
}

void create_file(const std::string& path) { std::ofstream{path} << "x"; }


// When `path` came to exist, polled every millisecond (for timings), or nullopt after `limit`.
std::optional<clock_type::time_point> appears_at(const std::string& path,
                                                 std::chrono::milliseconds limit) {
  auto give_up = clock_type::now() + limit;
  while (!fs::exists(path)) {
    if (clock_type::now() >= give_up) return std::nullopt;
    std::this_thread::sleep_for(1ms);
  }
  return clock_type::now();
}

long long ms_between(clock_type::time_point from, clock_type::time_point to) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(to - from).count();
}

// A command that records its pid, says it runs (creates `ready`), and on SIGTERM creates
// `termed` and exits 3. It waits in `wait`, which a trapped signal interrupts at once.
// It ends by itself after `seconds`, so that nothing it started outlives a failed test for long.
std::vector<std::string> trap_term(const temp_dir& dir, const std::string& seconds = "30") {
  return {"sh", "-c",
          "trap ': > \"$2\"; kill $! 2>/dev/null; exit 3' TERM; echo $$ > \"$3\"; "
          "touch \"$1\"; sleep \"$4\" & wait $!",
          "sh", dir.file("ready"), dir.file("termed"), dir.file("pid"), seconds};
}

// A command that ignores SIGTERM and, being exec'd by its shell, keeps the pid in `pid`.
std::vector<std::string> ignore_term(const temp_dir& dir) {
  return {"sh", "-c", "trap '' TERM; echo $$ > \"$2\"; touch \"$1\"; exec sleep 30", "sh",
          dir.file("ready"), dir.file("pid")};
}

// Whether the process whose pid the command wrote to `file` still exists.
bool still_runs(const std::string& file) {
  pid_t pid = std::stoi(read_file(file));
  return pid > 0 && (::kill(pid, 0) == 0 || errno != ESRCH);
}

long long count_lines(const std::string& text) {
  return std::count(text.begin(), text.end(), '\n');
}
}  // namespace

BOOST_AUTO_TEST_SUITE(cli)

BOOST_AUTO_TEST_CASE(exit_code_of_the_command_passes_through, *utf::timeout(60)) {
  redis_server srv;
  auto key = unique_key();
  BOOST_TEST(cli_process(exec_args(srv, key, {}, {"sh", "-c", "exit 7"})).wait() == 7);
  BOOST_TEST(cli_process(exec_args(srv, key, {}, {"true"})).wait() == 0);
  // Killed by a signal: 128 + N, as a shell reports it.
  BOOST_TEST(cli_process(exec_args(srv, key, {}, {"sh", "-c", "kill -KILL $$"})).wait() ==
             128 + SIGKILL);
  BOOST_TEST(!key_exists(srv, key));
}

BOOST_AUTO_TEST_CASE(command_sees_fencing_token_and_key, *utf::timeout(60)) {
  redis_server srv;
  temp_dir dir;
  auto key = unique_key();
  const std::string script =
      "printf '%s\\n%s\\n' \"$LOCKSMITH_FENCING_TOKEN\" \"$LOCKSMITH_KEY\" > \"$1\"";
  auto write_env = [&](const std::string& file) {
    return exec_args(srv, key, {}, {"sh", "-c", script, "sh", file});
  };
  BOOST_TEST_REQUIRE(cli_process(write_env(dir.file("first"))).wait() == 0);
  BOOST_TEST_REQUIRE(cli_process(write_env(dir.file("second"))).wait() == 0);
  std::istringstream first(read_file(dir.file("first"))), second(read_file(dir.file("second")));
  unsigned long long token1 = 0, token2 = 0;
  std::string key1, key2;
  BOOST_TEST_REQUIRE(static_cast<bool>(first >> token1 >> key1));
  BOOST_TEST_REQUIRE(static_cast<bool>(second >> token2 >> key2));
  BOOST_TEST(token1 > 0u);
  BOOST_TEST(token2 > token1);  // fencing tokens grow with each acquisition
  BOOST_TEST(key1 == key);
  BOOST_TEST(key2 == key);
}

BOOST_AUTO_TEST_CASE(lock_is_held_while_the_command_runs_and_released_after, *utf::timeout(60)) {
  redis_server srv;
  temp_dir dir;
  auto key = unique_key();
  cli_process holder(exec_args(srv, key, {"--ttl", "30s"}, hold_until(dir)));
  BOOST_TEST_REQUIRE(eventually([&] { return fs::exists(dir.file("ready")); }), holder.err());
  BOOST_TEST(key_exists(srv, key));
  auto pttl = std::stoll(srv.text({"PTTL", lock_key(key)}));
  BOOST_TEST(pttl > 0);
  BOOST_TEST(pttl <= 30000);
  create_file(dir.file("go"));
  BOOST_TEST(holder.wait() == 0);
  // Released before locksmith exits, not left to expire.
  BOOST_TEST(!key_exists(srv, key));
}

BOOST_AUTO_TEST_CASE(second_exec_times_out_while_the_first_holds, *utf::timeout(60)) {
  redis_server srv;
  temp_dir dir;
  auto key = unique_key();
  cli_process holder(exec_args(srv, key, {}, hold_until(dir)));
  BOOST_TEST_REQUIRE(eventually([&] { return fs::exists(dir.file("ready")); }), holder.err());
  for (auto strategy : {"spin", "subscribe"}) {
    cli_process waiter(exec_args(srv, key, {"--wait", "100ms", "--strategy", strategy},
                                 {"sh", "-c", "touch \"$1\"", "sh", dir.file("ran")}));
    auto t0 = clock_type::now();
    BOOST_TEST(waiter.wait() == 75);
    BOOST_TEST(ms_since(t0) < 5000);
    BOOST_TEST(!waiter.err().empty());
  }
  BOOST_TEST(!fs::exists(dir.file("ran")));  // the waiters never ran their command
  create_file(dir.file("go"));
  BOOST_TEST(holder.wait() == 0);
  // Once released, the lock can be taken again.
  BOOST_TEST(cli_process(exec_args(srv, key, {"--wait", "0ms"}, {"true"})).wait() == 0);
}

BOOST_AUTO_TEST_CASE(a_waiter_gets_the_lock_when_the_holder_ends, *utf::timeout(60)) {
  redis_server srv;
  temp_dir dir;
  auto key = unique_key();
  cli_process holder(exec_args(srv, key, {}, hold_until(dir)));
  BOOST_TEST_REQUIRE(eventually([&] { return fs::exists(dir.file("ready")); }), holder.err());
  cli_process waiter(exec_args(srv, key, {"--wait", "20s", "--strategy", "subscribe"},
                               {"sh", "-c", "test -e \"$1\"", "sh", dir.file("go")}));
  // The waiter has tried once and now listens for the release.
  BOOST_TEST_REQUIRE(eventually([&] { return listeners(srv, key) == 1; }), waiter.err());
  create_file(dir.file("go"));
  BOOST_TEST(holder.wait() == 0);
  BOOST_TEST(waiter.wait() == 0);  // it ran after the holder: "go" existed
}

// Without --strategy, a waiter listens for the release (subscribe), as the library does.
BOOST_AUTO_TEST_CASE(the_default_strategy_is_subscribe, *utf::timeout(60)) {
  redis_server srv;
  temp_dir dir;
  auto key = unique_key();
  cli_process holder(exec_args(srv, key, {}, hold_until(dir)));
  BOOST_TEST_REQUIRE(eventually([&] { return fs::exists(dir.file("ready")); }), holder.err());
  cli_process waiter(exec_args(srv, key, {"--wait", "20s"}, {"true"}));
  // A spinning waiter would never subscribe.
  BOOST_TEST(eventually([&] { return listeners(srv, key) == 1; }), waiter.err());
  create_file(dir.file("go"));
  BOOST_TEST(holder.wait() == 0);
  BOOST_TEST(waiter.wait() == 0);
}

BOOST_AUTO_TEST_CASE(usage_errors_exit_64, *utf::timeout(60)) {
  redis_server srv;
  auto key = unique_key();
  std::vector<std::vector<std::string>> bad = {
      exec_args(srv, key, {"--ttl", "10"}, {"true"}),
      exec_args(srv, key, {"--wait", "-1s"}, {"true"}),
      exec_args(srv, key, {"--node-timeout", "1.5s"}, {"true"}),
      exec_args(srv, key, {"--ttl", "99999999999999999999h"}, {"true"}),
      exec_args(srv, key, {"--strategy", "poll"}, {"true"}),
      exec_args(srv, "", {}, {"true"}),
      {"exec", "--redis", srv.url(), "--", "true"},                       // no --key
      {"exec", "--redis", "http://127.0.0.1:6379", "--key", key, "--", "true"},
      {"exec", "--redis", "redis://127.0.0.1:99999", "--key", key, "--", "true"},
      {"exec", "--redis", srv.url(), "--key", key},                       // no command
      {"exec", "--redis", srv.url(), "--key", key, "--bogus", "--", "true"},
  };
  for (const auto& args : bad) {
    cli_process p(args);
    BOOST_TEST(p.wait() == 64,
               "args: " << args[3] << " " << args.back() << "; stderr: " << p.err());
    auto err = p.err();
    BOOST_TEST(std::count(err.begin(), err.end(), '\n') == 1, "not one line: " << err);
    BOOST_TEST(err.rfind("locksmith: ", 0) == 0u, err);
  }
  BOOST_TEST(srv.text({"DBSIZE"}) == "0");  // nothing was locked
}

BOOST_AUTO_TEST_CASE(no_subcommand_prints_usage_and_exits_64, *utf::timeout(60)) {
  cli_process bare({});
  BOOST_TEST(bare.wait() == 64);
  BOOST_TEST(bare.err().find("exec") != std::string::npos);
  cli_process help({"exec", "--help"});
  BOOST_TEST(help.wait() == 0);
  for (auto code : {"64", "69", "70", "75", "76", "127", "LOCKSMITH_FENCING_TOKEN", "--grace",
                    "--max-hold", "renewed", "SIGTERM", "SIGKILL"})
    BOOST_TEST(help.out().find(code) != std::string::npos, code << " not in --help");
}

// 3 of 5 nodes frozen: the attempts fail (exit 69), and the SETs that landed on the two healthy
// nodes, and those queued to the frozen ones, must all be released: the tool closes its client,
// which sees its owned releases through, before it exits. Once the nodes resume, no key is left.
BOOST_AUTO_TEST_CASE(failed_attempts_leave_no_key_after_exit, *utf::timeout(120)) {
  std::vector<std::unique_ptr<redis_server>> nodes;
  for (int i = 0; i < 5; ++i) nodes.push_back(std::make_unique<redis_server>());
  auto key = unique_key();
  for (int i = 2; i < 5; ++i) nodes[i]->pause();
  std::vector<std::string> args{"exec"};
  for (auto& n : nodes) args.insert(args.end(), {"--redis", n->url()});
  args.insert(args.end(), {"--key", key, "--wait", "1s", "--", "true"});
  cli_process p(args);
  int const code = p.wait(30s);
  for (int i = 2; i < 5; ++i) nodes[i]->resume();
  BOOST_TEST(code == 69, p.err());
  BOOST_TEST(eventually([&] {
    return std::none_of(nodes.begin(), nodes.end(), [&](auto& n) { return key_exists(*n, key); });
  }, 5s));
}

BOOST_AUTO_TEST_CASE(unreachable_redis_exits_69, *utf::timeout(60)) {
  redis_server srv;
  srv.kill();
  cli_process p(exec_args(srv, unique_key(), {"--wait", "200ms"}, {"true"}));
  auto t0 = clock_type::now();
  BOOST_TEST(p.wait(10s) == 69, p.err());
  BOOST_TEST(ms_since(t0) < 5000);
}

BOOST_AUTO_TEST_CASE(key_of_another_type_exits_70, *utf::timeout(60)) {
  redis_server srv;
  auto key = unique_key();
  BOOST_TEST_REQUIRE(srv.text({"RPUSH", lock_key(key), "x"}) == "1");
  cli_process p(exec_args(srv, key, {"--wait", "1s"}, {"true"}));
  BOOST_TEST(p.wait() == 70);
  BOOST_TEST(p.err().find("unexpected reply") != std::string::npos, p.err());
  BOOST_TEST(p.err().find("WRONGTYPE") != std::string::npos, p.err());  // the server's own words
  BOOST_TEST(srv.text({"TYPE", lock_key(key)}) == "list");  // left alone
}

BOOST_AUTO_TEST_CASE(command_not_found_exits_127_and_releases, *utf::timeout(60)) {
  redis_server srv;
  auto key = unique_key();
  auto missing = "locksmith-no-such-command-" + std::to_string(::getpid());
  cli_process p(exec_args(srv, key, {}, {missing}));
  BOOST_TEST(p.wait() == 127);
  BOOST_TEST(p.err().find("No such file") != std::string::npos, p.err());
  BOOST_TEST(!key_exists(srv, key));
}

BOOST_AUTO_TEST_CASE(sigterm_is_forwarded_to_the_command, *utf::timeout(60)) {
  redis_server srv;
  temp_dir dir;
  auto key = unique_key();
  // The trap is set before "ready" exists, so the forwarded SIGTERM finds it.
  cli_process p(exec_args(srv, key, {},
                          {"sh", "-c",
                           "trap 'exit 42' TERM; touch \"$1\"; while :; do sleep 0.01; done", "sh",
                           dir.file("ready")}));
  BOOST_TEST_REQUIRE(eventually([&] { return fs::exists(dir.file("ready")); }), p.err());
  ::kill(p.pid(), SIGTERM);
  BOOST_TEST(p.wait() == 42);  // the command's own code: locksmith waited for it
  BOOST_TEST(!key_exists(srv, key));
}

BOOST_AUTO_TEST_CASE(sigint_that_kills_the_command_exits_130, *utf::timeout(60)) {
  redis_server srv;
  temp_dir dir;
  auto key = unique_key();
  cli_process p(exec_args(srv, key, {},
                          {"sh", "-c", "touch \"$1\"; exec sleep 30", "sh", dir.file("ready")}));
  BOOST_TEST_REQUIRE(eventually([&] { return fs::exists(dir.file("ready")); }), p.err());
  ::kill(p.pid(), SIGINT);
  BOOST_TEST(p.wait() == 128 + SIGINT);
  BOOST_TEST(!key_exists(srv, key));
}

BOOST_AUTO_TEST_CASE(a_signal_stops_the_wait_for_the_lock, *utf::timeout(60)) {
  redis_server srv;
  temp_dir dir;
  auto key = unique_key();
  cli_process holder(exec_args(srv, key, {}, hold_until(dir)));
  BOOST_TEST_REQUIRE(eventually([&] { return fs::exists(dir.file("ready")); }), holder.err());
  cli_process waiter(exec_args(srv, key, {"--wait", "30s", "--strategy", "subscribe"},
                               {"sh", "-c", "touch \"$1\"", "sh", dir.file("ran")}));
  BOOST_TEST_REQUIRE(eventually([&] { return listeners(srv, key) == 1; }), waiter.err());
  ::kill(waiter.pid(), SIGTERM);
  BOOST_TEST(waiter.wait(5s) == 128 + SIGTERM);
  BOOST_TEST(!fs::exists(dir.file("ran")));
  BOOST_TEST(key_exists(srv, key));  // the holder's lock is untouched
  create_file(dir.file("go"));
  BOOST_TEST(holder.wait() == 0);
}

BOOST_AUTO_TEST_SUITE_END()

// Renewal and lost leases: the lease is renewed while CMD runs; once it is lost, CMD is stopped
// (SIGTERM, then SIGKILL after --grace) and locksmith exits 76.
BOOST_AUTO_TEST_SUITE(cli_lease)

BOOST_AUTO_TEST_CASE(the_lease_is_renewed_while_the_command_outlives_the_ttl, *utf::timeout(60)) {
  redis_server srv;
  temp_dir dir;
  auto key = unique_key();
  cli_process holder(exec_args(
      srv, key, {"--ttl", "1s", "--grace", "200ms"},
      {"sh", "-c", "touch \"$1\"; while [ ! -e \"$2\" ]; do sleep 0.01; done; exit 5", "sh",
       dir.file("ready"), dir.file("go")}));
  auto started = appears_at(dir.file("ready"), 10s);
  BOOST_TEST_REQUIRE(started.has_value(), holder.err());
  const auto token = srv.text({"GET", lock_key(key)});
  // The key keeps our token all along (never expired and retaken) until `until`.
  auto same_owner_until = [&](clock_type::time_point until) {
    for (; clock_type::now() < until; std::this_thread::sleep_for(20ms))
      if (srv.text({"GET", lock_key(key)}) != token) return false;
    return true;
  };
  // 2.5 TTLs in: without renewal the key would be long gone.
  BOOST_TEST(same_owner_until(*started + 2500ms));
  BOOST_TEST(std::stoll(srv.text({"PTTL", lock_key(key)})) > 0);
  cli_process other(exec_args(srv, key, {"--wait", "100ms"},
                              {"sh", "-c", "touch \"$1\"", "sh", dir.file("ran")}));
  BOOST_TEST(other.wait() == 75, other.err());
  BOOST_TEST(same_owner_until(*started + 3000ms));
  create_file(dir.file("go"));
  BOOST_TEST(holder.wait() == 5);  // CMD's own code: 3 TTLs long, and never stopped
  BOOST_TEST(ms_since(*started) >= 3000);
  BOOST_TEST(holder.err().empty(), holder.err());
  BOOST_TEST(!fs::exists(dir.file("ran")));
  BOOST_TEST(!key_exists(srv, key));  // released at the end
}

BOOST_AUTO_TEST_CASE(frozen_redis_stops_the_command_before_the_key_expires, *utf::timeout(60)) {
  redis_server srv;
  temp_dir dir;
  auto key = unique_key();
  cli_process p(exec_args(srv, key, {"--ttl", "1s", "--grace", "500ms"}, trap_term(dir)));
  BOOST_TEST_REQUIRE(eventually([&] { return fs::exists(dir.file("ready")); }), p.err());
  // The key expires in Redis at (the moment PTTL ran) + pttl, so no earlier than before + pttl.
  auto before = clock_type::now();
  auto pttl = std::chrono::milliseconds{std::stoll(srv.text({"PTTL", lock_key(key)}))};
  auto frozen = clock_type::now();
  srv.pause();
  auto termed = appears_at(dir.file("termed"), 5s);
  BOOST_TEST_REQUIRE(termed.has_value(), "CMD got no SIGTERM; stderr: " << p.err());
  BOOST_TEST(p.wait(5s) == 76);  // although CMD itself exited 3
  auto exited = clock_type::now();
  srv.resume();
  auto expiry = before + pttl;
  BOOST_TEST_MESSAGE("freeze to SIGTERM " << ms_between(frozen, *termed) << " ms (TTL 1000 ms), "
                     "to exit " << ms_between(frozen, exited) << " ms; SIGTERM "
                     << ms_between(*termed, expiry) << " ms before the key's earliest expiry");
  BOOST_TEST(ms_between(frozen, *termed) < 1000);  // within one TTL of the freeze, not 30 s
  BOOST_TEST(ms_between(frozen, exited) < 1500);
  BOOST_TEST(ms_between(*termed, expiry) > 0);  // CMD was told before another could lock
  auto err = p.err();
  BOOST_TEST(err == "locksmith: lease on '" + key + "' lost; stopping CMD\n", err);
  BOOST_TEST(!still_runs(dir.file("pid")));
  BOOST_TEST(eventually([&] { return !key_exists(srv, key); }, 5s));  // it expires
}

BOOST_AUTO_TEST_CASE(a_command_that_ignores_sigterm_is_killed_after_the_grace, *utf::timeout(60)) {
  redis_server srv;
  temp_dir dir;
  auto key = unique_key();
  cli_process p(exec_args(srv, key, {"--ttl", "1s", "--grace", "200ms"}, ignore_term(dir)));
  BOOST_TEST_REQUIRE(eventually([&] { return fs::exists(dir.file("ready")); }), p.err());
  // A deleted key is found at the next renewal, within ttl/3: the loss comes at a known time.
  auto deleted = clock_type::now();
  BOOST_TEST_REQUIRE(srv.text({"DEL", lock_key(key)}) == "1");
  BOOST_TEST(p.wait(5s) == 76);
  auto took = ms_since(deleted);
  BOOST_TEST_MESSAGE("key deleted to exit, with a 200 ms grace: " << took << " ms");
  BOOST_TEST(took >= 200);  // CMD had its grace before the SIGKILL
  BOOST_TEST(took < 1500);
  auto err = p.err();
  BOOST_TEST(err.find("lost; stopping CMD") != std::string::npos, err);
  BOOST_TEST(err.find("SIGKILL") != std::string::npos, err);
  BOOST_TEST(count_lines(err) == 2, err);
  BOOST_TEST(!still_runs(dir.file("pid")));  // the sleep that ignored SIGTERM is gone
}

BOOST_AUTO_TEST_CASE(a_deleted_key_stops_the_command_promptly, *utf::timeout(60)) {
  redis_server srv;
  temp_dir dir;
  auto key = unique_key();
  cli_process p(exec_args(srv, key, {"--ttl", "1s", "--grace", "500ms"}, trap_term(dir)));
  BOOST_TEST_REQUIRE(eventually([&] { return fs::exists(dir.file("ready")); }), p.err());
  auto deleted = clock_type::now();
  BOOST_TEST_REQUIRE(srv.text({"DEL", lock_key(key)}) == "1");
  BOOST_TEST(p.wait(5s) == 76);
  auto took = ms_since(deleted);
  BOOST_TEST_MESSAGE("key deleted to exit: " << took << " ms");
  BOOST_TEST(took < 1000);  // at the next renewal (ttl/3), not at the end of a validity
  BOOST_TEST(fs::exists(dir.file("termed")));
  BOOST_TEST(count_lines(p.err()) == 1, p.err());
}

BOOST_AUTO_TEST_CASE(grace_zero_kills_at_once_without_sigterm, *utf::timeout(60)) {
  redis_server srv;
  temp_dir dir;
  auto key = unique_key();
  cli_process p(exec_args(srv, key, {"--ttl", "1s", "--grace", "0ms"}, trap_term(dir, "3")));
  BOOST_TEST_REQUIRE(eventually([&] { return fs::exists(dir.file("ready")); }), p.err());
  BOOST_TEST_REQUIRE(srv.text({"DEL", lock_key(key)}) == "1");
  BOOST_TEST(p.wait(5s) == 76);
  BOOST_TEST(!fs::exists(dir.file("termed")));  // killed outright: its trap never ran
  BOOST_TEST(!still_runs(dir.file("pid")));
}

BOOST_AUTO_TEST_CASE(max_hold_lets_the_lock_go_and_stops_the_command, *utf::timeout(60)) {
  redis_server srv;
  auto key = unique_key();
  auto t0 = clock_type::now();
  cli_process p(exec_args(srv, key, {"--ttl", "1s", "--max-hold", "500ms", "--grace", "200ms"},
                          {"sleep", "10"}));
  BOOST_TEST(p.wait(5s) == 76, p.err());
  auto took = ms_since(t0);
  BOOST_TEST_MESSAGE("--max-hold 500ms: exit after " << took << " ms");
  BOOST_TEST(took >= 500);  // the hold counts from the lock attempt, which began after t0
  BOOST_TEST(took < 1500);
  BOOST_TEST(p.err().find("lost; stopping CMD") != std::string::npos, p.err());
  BOOST_TEST(!key_exists(srv, key));  // let go, not left to expire
}

// A short --ttl needs no --grace: the default grace shrinks to leave the watchdog room to renew.
BOOST_AUTO_TEST_CASE(a_short_ttl_works_with_the_default_grace, *utf::timeout(60)) {
  redis_server srv;
  auto key = unique_key();
  cli_process quick(exec_args(srv, key, {"--ttl", "1s"}, {"sh", "-c", "exit 7"}));
  BOOST_TEST(quick.wait() == 7);
  BOOST_TEST(quick.err().empty(), quick.err());
  // And the lease is renewed while CMD outlives the TTL.
  temp_dir dir;
  cli_process holder(exec_args(
      srv, key, {"--ttl", "1s"},
      {"sh", "-c", "touch \"$1\"; while [ ! -e \"$2\" ]; do sleep 0.01; done; exit 5", "sh",
       dir.file("ready"), dir.file("go")}));
  BOOST_TEST_REQUIRE(eventually([&] { return fs::exists(dir.file("ready")); }), holder.err());
  const auto token = srv.text({"GET", lock_key(key)});
  // A renewal shows as the key's PTTL going up again; three of them (one every ttl/3) take the
  // lease past its first TTL.
  auto pttl = [&] { return std::stoll(srv.text({"PTTL", lock_key(key)})); };
  for (int renewals = 0; renewals < 3; ++renewals) {
    auto last = pttl();
    auto went_up = [&] {
      auto now = pttl();
      return std::exchange(last, now) < now;
    };
    BOOST_TEST_REQUIRE(eventually(went_up, 5s),
                       "no renewal " << renewals + 1 << "; stderr: " << holder.err());
  }
  BOOST_TEST(srv.text({"GET", lock_key(key)}) == token);
  create_file(dir.file("go"));
  BOOST_TEST(holder.wait() == 5);
  BOOST_TEST(holder.err().empty(), holder.err());
  BOOST_TEST(!key_exists(srv, key));
}

BOOST_AUTO_TEST_CASE(bad_grace_or_max_hold_exits_64, *utf::timeout(60)) {
  redis_server srv;
  auto key = unique_key();
  std::vector<std::vector<std::string>> bad = {
      {"--grace", "1.5s"}, {"--grace", "-1s"}, {"--grace", "soon"},   {"--grace", "25h"},
      {"--grace", ""},     {"--max-hold", "0ms"}, {"--max-hold", "1d"}, {"--max-hold", "8761h"},
  };
  for (const auto& options : bad) {
    cli_process p(exec_args(srv, key, options, {"true"}));
    BOOST_TEST(p.wait() == 64, options[0] << " '" << options[1] << "'; stderr: " << p.err());
    auto err = p.err();
    BOOST_TEST(count_lines(err) == 1, "not one line: " << err);
    BOOST_TEST(err.rfind("locksmith: " + options[0], 0) == 0u, err);
  }
  BOOST_TEST(srv.text({"DBSIZE"}) == "0");  // nothing was locked
}

BOOST_AUTO_TEST_CASE(grace_must_be_below_the_ttl_and_leave_room_to_renew, *utf::timeout(60)) {
  redis_server srv;
  auto key = unique_key();
  cli_process refused(exec_args(srv, key, {"--ttl", "1s", "--grace", "1s"}, {"true"}));
  BOOST_TEST(refused.wait() == 64);
  BOOST_TEST(refused.err().find("--grace must be below --ttl") != std::string::npos, refused.err());
  // 1s - 333ms - 12ms drift - 2 x 50ms node timeout: the grace must be below 555ms.
  cli_process too_long(exec_args(srv, key, {"--ttl", "1s", "--grace", "555ms"}, {"true"}));
  BOOST_TEST(too_long.wait() == 64);
  BOOST_TEST(too_long.err() ==
                 "locksmith: --grace 555ms leaves --ttl 1s no room to renew: it must be below "
                 "555ms\n",
             too_long.err());
  cli_process short_ttl(exec_args(srv, key, {"--ttl", "154ms", "--grace", "0ms"}, {"true"}));
  BOOST_TEST(short_ttl.wait() == 64);
  BOOST_TEST(short_ttl.err().rfind("locksmith: --ttl 154ms is too short to renew", 0) == 0u,
             short_ttl.err());
  BOOST_TEST(srv.text({"DBSIZE"}) == "0");  // the refused ones locked nothing
  cli_process risky(exec_args(srv, key, {"--ttl", "1s", "--grace", "554ms"}, {"true"}));
  BOOST_TEST(risky.wait() == 0);
  BOOST_TEST(risky.err().find("warning: --ttl") != std::string::npos, risky.err());
  cli_process fine(exec_args(srv, key, {"--ttl", "3s", "--grace", "1s"}, {"true"}));
  BOOST_TEST(fine.wait() == 0);
  BOOST_TEST(fine.err().empty(), fine.err());
}

BOOST_AUTO_TEST_SUITE_END()

// TLS and ACL users on the command line: the node and the reason on one line, exit 69 for TLS
// and 77 for refused credentials, and the password nowhere.
BOOST_AUTO_TEST_SUITE(cli_security)

namespace {

// A redis-server with a TLS listener (beside the plain port its helper uses).
struct tls_redis {
  explicit tls_redis(bool require_client_cert = false)
      : tls_port(locksmith::test::free_loopback_port()),
        srv(locksmith::test::tls_server_args(tls_port, locksmith::test::test_certs().server_cert,
                                             locksmith::test::test_certs().server_key,
                                             require_client_cert)) {}
  std::string url() const { return "rediss://localhost:" + std::to_string(tls_port); }
  std::uint16_t tls_port;
  redis_server srv;
};

std::vector<std::string> tls_exec(const tls_redis& r, const std::string& key,
                                  std::vector<std::string> options) {
  std::vector<std::string> args{"exec", "--redis", r.url(), "--key", key, "--wait", "20s"};
  args.insert(args.end(), options.begin(), options.end());
  args.insert(args.end(), {"--", "true"});
  return args;
}

}  // namespace

BOOST_AUTO_TEST_CASE(tls_with_the_ca_runs_the_command, *utf::timeout(60)) {
  tls_redis r;
  cli_process p(tls_exec(r, unique_key(), {"--tls-ca", locksmith::test::test_certs().ca}));
  BOOST_TEST(p.wait() == 0, p.err());
}

BOOST_AUTO_TEST_CASE(an_untrusted_server_exits_69_at_once_naming_node_and_reason,
                     *utf::timeout(60)) {
  tls_redis r;
  auto t0 = clock_type::now();
  cli_process p(tls_exec(r, unique_key(), {"--tls-ca", locksmith::test::test_certs().other_ca}));
  BOOST_TEST(p.wait() == 69, p.err());
  BOOST_TEST(ms_since(t0) < 5000);  // the wait is 20 s
  auto const err = p.err();
  BOOST_TEST(count_lines(err) == 1, err);
  BOOST_TEST(err.find(r.url()) != std::string::npos, err);
  BOOST_TEST(err.find("certificate verify failed") != std::string::npos, err);
}

BOOST_AUTO_TEST_CASE(mutual_tls_needs_both_cert_options, *utf::timeout(60)) {
  tls_redis r{true};
  auto const& certs = locksmith::test::test_certs();
  cli_process with(tls_exec(r, unique_key(), {"--tls-ca", certs.ca, "--tls-cert",
                                              certs.client_cert, "--tls-key", certs.client_key}));
  BOOST_TEST(with.wait() == 0, with.err());
  cli_process without(tls_exec(r, unique_key(), {"--tls-ca", certs.ca}));
  BOOST_TEST(without.wait() == 69, without.err());
  cli_process half(tls_exec(r, unique_key(), {"--tls-cert", certs.client_cert}));
  BOOST_TEST(half.wait() == 64, half.err());
  BOOST_TEST(half.err().find("--tls-key") != std::string::npos, half.err());
}

BOOST_AUTO_TEST_CASE(a_wrong_password_exits_77_and_never_shows_it, *utf::timeout(60)) {
  redis_server srv;
  BOOST_TEST_REQUIRE(srv.text({"ACL", "SETUSER", "locker", "on", ">right-pass", "~*", "&*",
                               "+@all"}) == "OK");
  auto t0 = clock_type::now();
  std::string const url = "redis://locker:Wr0ng-Pa55@127.0.0.1:" + std::to_string(srv.port());
  cli_process p({"exec", "--redis", url, "--key", unique_key(), "--wait", "20s", "--", "true"});
  BOOST_TEST(p.wait() == 77, p.err());
  BOOST_TEST(ms_since(t0) < 5000);
  auto const err = p.err();
  BOOST_TEST(count_lines(err) == 1, err);
  BOOST_TEST(err.find("WRONGPASS") != std::string::npos, err);
  BOOST_TEST(err.find("redis://locker:***@127.0.0.1") != std::string::npos, err);
  BOOST_TEST(err.find("Wr0ng-Pa55") == std::string::npos, err);
}

BOOST_AUTO_TEST_CASE(help_lists_the_tls_options_and_exit_77, *utf::timeout(60)) {
  cli_process help({"exec", "--help"});
  BOOST_TEST(help.wait() == 0);
  for (auto const* text : {"--tls-ca", "--tls-cert", "--tls-key", "77", "WRONGPASS"})
    BOOST_TEST(help.out().find(text) != std::string::npos, text << " not in --help");
}

BOOST_AUTO_TEST_SUITE_END()
