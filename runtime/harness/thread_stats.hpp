// Per-thread interference counts read around every sample (measurement.md: context switches,
// migrations and time spent waiting for a CPU explain the heavy tails on a shared host), and
// scoped CPU pinning.
#pragma once

#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace hspc_harness {

// What one thread spent and suffered during one sample.
struct ThreadStats {
  std::int64_t cpu_ns = 0;      // CLOCK_THREAD_CPUTIME_ID
  std::int64_t nvcsw = 0;       // voluntary context switches (it blocked)
  std::int64_t nivcsw = 0;      // involuntary ones (it was preempted)
  std::int64_t migrations = 0;  // se.nr_migrations; -1 when the kernel does not expose it
  std::int64_t delay_ns = 0;    // time runnable but not running (schedstat); -1 when not exposed
};

namespace detail {

inline std::int64_t thread_cpu_ns() noexcept {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

// Reads a small /proc file of the calling thread into `buf` (NUL-terminated); false if it cannot.
template <std::size_t N>
bool read_proc(const char* path, char (&buf)[N]) noexcept {
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const ssize_t n = read(fd, buf, N - 1);
  close(fd);
  if (n <= 0) return false;
  buf[n] = '\0';
  return true;
}

// se.nr_migrations of the calling thread from /proc/thread-self/sched (CONFIG_SCHED_DEBUG), or -1.
// A few tens of microseconds: only ever called outside the timed region.
inline std::int64_t thread_migrations() noexcept {
  char buf[4096];
  if (!read_proc("/proc/thread-self/sched", buf)) return -1;
  const char* key = std::strstr(buf, "se.nr_migrations");
  if (key == nullptr) return -1;
  const char* colon = std::strchr(key, ':');
  return colon == nullptr ? -1 : std::strtoll(colon + 1, nullptr, 10);
}

// Time the calling thread has spent runnable on a run queue but not running, in ns: the second
// field of /proc/thread-self/schedstat (CONFIG_SCHED_INFO), or -1. Preemption shows here whatever
// its length, where a count of involuntary switches weighs a 3 ms time slice like a 3 us one.
inline std::int64_t thread_run_delay_ns() noexcept {
  char buf[128];
  if (!read_proc("/proc/thread-self/schedstat", buf)) return -1;
  char* end = nullptr;
  std::strtoll(buf, &end, 10);  // time on the CPU
  if (end == buf) return -1;
  const char* delay = end;
  const long long value = std::strtoll(delay, &end, 10);
  return end == delay ? -1 : value;
}

}  // namespace detail

// Snapshots the calling thread's counters; `finish` turns them into deltas. The cheap counters
// (CPU time, rusage) and the costly migration count are split so a thread can stop its clock
// right after its work and read /proc later, when reading it disturbs nobody.
class ThreadProbe {
 public:
  void start() noexcept {
    start_migrations_ = detail::thread_migrations();
    start_delay_ = detail::thread_run_delay_ns();
    start_ = cheap();
  }
  void stop_cheap() noexcept { stop_ = cheap(); }
  ThreadStats finish() const noexcept {
    const std::int64_t m = detail::thread_migrations();
    const std::int64_t delay = detail::thread_run_delay_ns();
    ThreadStats d;
    d.cpu_ns = stop_.cpu_ns - start_.cpu_ns;
    d.nvcsw = stop_.nvcsw - start_.nvcsw;
    d.nivcsw = stop_.nivcsw - start_.nivcsw;
    d.migrations = (m < 0 || start_migrations_ < 0) ? -1 : m - start_migrations_;
    d.delay_ns = (delay < 0 || start_delay_ < 0) ? -1 : delay - start_delay_;
    return d;
  }

 private:
  static ThreadStats cheap() noexcept {
    ThreadStats s;
    s.cpu_ns = detail::thread_cpu_ns();
    rusage ru{};
    getrusage(RUSAGE_THREAD, &ru);
    s.nvcsw = ru.ru_nvcsw;
    s.nivcsw = ru.ru_nivcsw;
    return s;
  }

  ThreadStats start_;
  ThreadStats stop_;
  std::int64_t start_migrations_ = -1;
  std::int64_t start_delay_ = -1;
};

inline long current_tid() noexcept { return syscall(SYS_gettid); }

// True when `cpu` is in the process's allowed set (checked when a plan is read).
inline bool cpu_allowed(int cpu) noexcept {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (cpu < 0 || cpu >= CPU_SETSIZE || sched_getaffinity(0, sizeof(set), &set) != 0) return false;
  return CPU_ISSET(cpu, &set);
}

// Pins the calling thread to `cpu` (nothing when cpu < 0) and restores its previous mask on scope
// exit, so the benchmark thread and the persistent worker are unpinned between samples.
class ScopedPin {
 public:
  explicit ScopedPin(int cpu) noexcept : active_(cpu >= 0) {
    if (!active_) return;
    CPU_ZERO(&saved_);
    pthread_getaffinity_np(pthread_self(), sizeof(saved_), &saved_);
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    if (pthread_setaffinity_np(pthread_self(), sizeof(one), &one) != 0) {
      // A plan naming a CPU we may not use was rejected when it was read; getting here means
      // the affinity changed under us, and a sample on the wrong CPU would be a silent lie.
      std::fprintf(stderr, "hspc_harness: cannot pin thread to CPU %d\n", cpu);
      std::abort();
    }
  }
  ~ScopedPin() {
    if (active_) pthread_setaffinity_np(pthread_self(), sizeof(saved_), &saved_);
  }
  ScopedPin(const ScopedPin&) = delete;
  ScopedPin& operator=(const ScopedPin&) = delete;

 private:
  bool active_;
  cpu_set_t saved_{};
};

}  // namespace hspc_harness
