// One run of a program as a child process, its stdout and stderr captured in files: the tests of
// the command-line tool and of the examples run their binaries with it.
#pragma once

#include "support/temp_dir.hpp"

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <string>
#include <vector>

namespace locksmith::test {

std::string read_file(std::string const& path);

// Polls `condition` until it holds or `limit` passes; returns whether it held.
bool poll_until(std::function<bool()> const& condition,
                std::chrono::milliseconds limit = std::chrono::seconds{10});

// Starts `program` with `args` (argv[1]...), stdin from /dev/null and the default signal
// dispositions, whatever the test runner did to its own. The destructor kills and reaps it if it
// still runs, so no process outlives its test.
class spawned_process {
public:
   spawned_process(std::string program, std::vector<std::string> args);
   ~spawned_process();
   spawned_process(spawned_process const&) = delete;
   spawned_process& operator=(spawned_process const&) = delete;

   pid_t pid() const { return pid_; }

   // Waits for the exit and returns the exit code (128+N for death by signal N). Fails the test,
   // killing the process, if it does not exit within `limit`.
   int wait(std::chrono::milliseconds limit = std::chrono::seconds{20});

   std::string out() const { return read_file(out_.file("stdout")); }
   std::string err() const { return read_file(out_.file("stderr")); }

private:
   std::vector<std::string> args_;  // argv, the program first
   temp_dir out_{"locksmith-process"};
   pid_t pid_ = -1;
};

}  // namespace locksmith::test
