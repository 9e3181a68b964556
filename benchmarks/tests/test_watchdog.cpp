// A sample that hangs past its deadline aborts the whole process with a message on stderr (the
// tuner records a timeout); a sample that finishes in time, or a disabled watchdog, never fires.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include "check.hpp"
#include "harness/watchdog.hpp"

namespace {

struct Outcome {
  int status = 0;
  std::string stderr_text;
};

// Runs `child` in a forked process (before this process starts any thread) and collects how it
// ended and what it wrote to stderr.
template <class F>
Outcome in_child(F child) {
  int pipe_fds[2];
  HARNESS_CHECK(pipe(pipe_fds) == 0);
  const pid_t pid = fork();
  HARNESS_CHECK(pid >= 0);
  if (pid == 0) {
    close(pipe_fds[0]);
    dup2(pipe_fds[1], STDERR_FILENO);
    child();
    std::_Exit(0);
  }
  close(pipe_fds[1]);
  Outcome out;
  char buf[512];
  for (ssize_t n; (n = read(pipe_fds[0], buf, sizeof(buf))) > 0;) out.stderr_text.append(buf, n);
  close(pipe_fds[0]);
  HARNESS_CHECK(waitpid(pid, &out.status, 0) == pid);
  return out;
}

void sleep_s(double s) { std::this_thread::sleep_for(std::chrono::duration<double>(s)); }

}  // namespace

int main() {
  const Outcome hung = in_child([] {
    hspc_harness::Watchdog dog(0.2);
    dog.arm("stuck/sample");
    sleep_s(30);  // far beyond the deadline: only the watchdog ends this
  });
  HARNESS_CHECK(WIFSIGNALED(hung.status) && WTERMSIG(hung.status) == SIGABRT);
  HARNESS_CHECK(hung.stderr_text.find("watchdog: sample 'stuck/sample' exceeded") !=
                std::string::npos);

  const Outcome in_time = in_child([] {
    hspc_harness::Watchdog dog(0.2);
    for (int i = 0; i < 3; ++i) {
      dog.arm("quick");
      dog.disarm();
    }
    sleep_s(0.6);  // several watchdog periods with nothing armed
  });
  HARNESS_CHECK(WIFEXITED(in_time.status) && WEXITSTATUS(in_time.status) == 0);

  const Outcome disabled = in_child([] {
    hspc_harness::Watchdog dog(0);
    dog.arm("unwatched");
    sleep_s(0.3);
  });
  HARNESS_CHECK(WIFEXITED(disabled.status) && WEXITSTATUS(disabled.status) == 0);
  std::puts("watchdog: ok");
  return 0;
}
