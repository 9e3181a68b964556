// Which side's code was running when a sample died. The harness calls the user's own per-event
// functions (hspc_produce, hspc_consume: see app.hpp); when one of them crashes, hangs or calls
// exit(), the tuner must say "your consumer_source crashed", not blame the candidate channel.
//
// Every thread that runs the user's code owns a slot here and marks in it, with a plain store
// before and after each call, whether it is inside hspc_produce or hspc_consume (app.hpp; nothing
// at all when no user code is compiled in). From those marks:
//   - a fatal signal (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT) writes one line naming the
//     faulting thread's side and the running sample, then the process dies of that same signal;
//   - the watchdog's timeout message says which side was in the user's code (watchdog.hpp), and
//     its own abort prints nothing more;
//   - exit() or quick_exit() during a sample writes the side that called it (the exit status
//     stays the user's).
// The lines (PREFIX is hspc_harness, or hspc_smoke for the smoke program):
//   PREFIX: fatal signal SIGSEGV in the user's consumer code (hspc_consume) during sample 'r3/c1'
//   PREFIX: fatal signal SIGBUS outside the user's code with no sample running
//   PREFIX: exit() called during sample 'r3/c1' from the user's producer code (hspc_produce)
#pragma once

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdlib>
#include <string>

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define HSPC_HARNESS_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define HSPC_HARNESS_SANITIZED 1
#endif
#endif

namespace hspc_harness {

// Which of the user's functions a thread is in.
enum class AppCode : unsigned char { none, producer, consumer };

namespace fault {

inline constexpr std::size_t kMaxThreads = 320;  // slots; threads past them share the last one
inline constexpr std::size_t kAltStackBytes = std::size_t{64} << 10;  // signal stack per thread
inline constexpr std::size_t kSampleNameBytes = 256;
#ifdef HSPC_HARNESS_SANITIZED
inline constexpr bool kSanitized = true;
#else
inline constexpr bool kSanitized = false;
#endif

// One thread's mark, on a cache line of its own: written by its thread per event, read by the
// watchdog and by the thread's own signal handler.
struct alignas(64) Slot {
  std::atomic<AppCode> code{AppCode::none};
  void* alt_stack = nullptr;  // kept reachable: the stack lives as long as the process
};

// Static storage, constant-initialised: usable from the first instruction, never destroyed.
inline Slot g_slots[kMaxThreads];
inline std::atomic<std::size_t> g_claimed{0};
inline thread_local Slot* t_slot = nullptr;
inline std::atomic<char> g_sample[kSampleNameBytes];  // the running sample's name, NUL-ended
inline std::atomic<bool> g_running{false};            // a sample is running
inline std::atomic<bool> g_quiet{false};  // a cause was already written: later deaths stay silent
inline std::atomic<bool> g_installed{false};
inline std::atomic<bool> g_exit_hooked{false};
inline std::atomic<const char*> g_prefix{"hspc_harness"};

// Gives the thread a signal stack of its own (unless it has one), so that a stack overflow in
// the user's code still reaches the handler.
inline void add_alt_stack(Slot& slot) noexcept {
  stack_t current{};
  if (::sigaltstack(nullptr, &current) != 0 || (current.ss_flags & SS_DISABLE) == 0) return;
  stack_t fresh{};
  fresh.ss_sp = std::malloc(kAltStackBytes);
  fresh.ss_size = kAltStackBytes;
  if (fresh.ss_sp != nullptr && ::sigaltstack(&fresh, nullptr) == 0) {
    slot.alt_stack = fresh.ss_sp;
  } else {
    std::free(fresh.ss_sp);
  }
}

[[gnu::noinline]] inline Slot& claim_slot() noexcept {
  const std::size_t i = g_claimed.fetch_add(1, std::memory_order_relaxed);
  Slot* slot = &g_slots[i < kMaxThreads ? i : kMaxThreads - 1];
  if (i < kMaxThreads) add_alt_stack(*slot);
  t_slot = slot;
  return *slot;
}

// This thread's slot, claimed on first use (the sides claim it when they are built, untimed).
inline Slot& this_thread_slot() noexcept {
  Slot* slot = t_slot;
  return __builtin_expect(slot != nullptr, 1) ? *slot : claim_slot();
}

// Whether any tracked thread is in `code` now (the watchdog's view of the other threads).
inline bool any_thread_in(AppCode code) noexcept {
  const std::size_t claimed = g_claimed.load(std::memory_order_relaxed);
  for (std::size_t i = 0; i < claimed && i < kMaxThreads; ++i) {
    if (g_slots[i].code.load(std::memory_order_relaxed) == code) return true;
  }
  return false;
}

// The running sample's name (without locks: a reader racing a new name may see a torn one).
inline void name_sample(const std::string& name) noexcept {
  const std::size_t n = name.size() < kSampleNameBytes ? name.size() : kSampleNameBytes - 1;
  for (std::size_t i = 0; i < n; ++i) g_sample[i].store(name[i], std::memory_order_relaxed);
  g_sample[n].store('\0', std::memory_order_relaxed);
}
inline std::string sample_name() {
  std::string name;
  for (std::size_t i = 0; i < kSampleNameBytes; ++i) {
    const char c = g_sample[i].load(std::memory_order_relaxed);
    if (c == '\0') break;
    name += c;
  }
  return name;
}
inline const char* prefix() noexcept { return g_prefix.load(std::memory_order_relaxed); }

// A line built without allocating, written with one write(2): usable in a signal handler.
class Line {
 public:
  Line& operator<<(const char* text) noexcept {
    while (*text != '\0' && size_ < sizeof(text_) - 1) text_[size_++] = *text++;
    return *this;
  }
  Line& sample() noexcept {
    for (std::size_t i = 0; i < kSampleNameBytes && size_ < sizeof(text_) - 1; ++i) {
      const char c = g_sample[i].load(std::memory_order_relaxed);
      if (c == '\0') break;
      text_[size_++] = c;
    }
    return *this;
  }
  void write() noexcept {
    text_[size_++] = '\n';
    for (std::size_t done = 0; done < size_;) {
      const ssize_t n = ::write(STDERR_FILENO, text_ + done, size_ - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return;
      done += static_cast<std::size_t>(n);
    }
  }

 private:
  char text_[512];
  std::size_t size_ = 0;
};

inline AppCode this_thread_code() noexcept {
  const Slot* slot = t_slot;
  return slot != nullptr ? slot->code.load(std::memory_order_relaxed) : AppCode::none;
}

inline const char* user_code(AppCode code) noexcept {
  switch (code) {
    case AppCode::producer:
      return "the user's producer code (hspc_produce)";
    case AppCode::consumer:
      return "the user's consumer code (hspc_consume)";
    case AppCode::none:
      break;
  }
  return nullptr;
}

inline const char* signal_name(int sig) noexcept {
  switch (sig) {
    case SIGSEGV:
      return "SIGSEGV";
    case SIGBUS:
      return "SIGBUS";
    case SIGFPE:
      return "SIGFPE";
    case SIGILL:
      return "SIGILL";
    case SIGABRT:
      return "SIGABRT";
    default:
      return "(unknown)";
  }
}

// Runs on the faulting thread (SA_RESETHAND: the default action is back already; SA_NODEFER:
// the re-raise below kills the process at once, with the signal in its exit status).
inline void on_fatal_signal(int sig) noexcept {
  if (!g_quiet.exchange(true)) {
    Line line;
    line << prefix() << ": fatal signal " << signal_name(sig) << " ";
    const char* code = user_code(this_thread_code());
    if (code != nullptr) {
      line << "in " << code;
    } else {
      line << "outside the user's code";
    }
    if (g_running.load(std::memory_order_relaxed)) {
      line << " during sample '";
      line.sample() << "'";
    } else {
      line << " with no sample running";
    }
    line.write();
  }
  ::raise(sig);
}

inline void report_exit(const char* call) noexcept {
  if (!g_running.load(std::memory_order_relaxed) || g_quiet.exchange(true)) return;
  Line line;
  line << prefix() << ": " << call << " called during sample '";
  line.sample() << "' from ";
  const char* code = user_code(this_thread_code());
  line << (code != nullptr ? code : "outside the user's code");
  line.write();
}
inline void exit_hook() noexcept { report_exit("exit()"); }
inline void quick_exit_hook() noexcept { report_exit("quick_exit()"); }

// The watchdog's words for where the tracked threads are now.
inline std::string threads_in_user_code() {
  const bool producer = any_thread_in(AppCode::producer);
  const bool consumer = any_thread_in(AppCode::consumer);
  if (producer && consumer) {
    return "the producer was in the user's hspc_produce and the consumer was in the user's "
           "hspc_consume";
  }
  if (producer) return "the producer was in the user's hspc_produce";
  if (consumer) return "the consumer was in the user's hspc_consume";
  return "no thread was in the user's code";
}

// At harness start: the fatal-signal handlers, and the calling thread's slot. `line_prefix` must
// be a string literal (it is read by the handlers for the life of the process). Under a sanitizer
// its own handlers stay: their reports say more.
inline void install(const char* line_prefix = "hspc_harness") noexcept {
  g_prefix.store(line_prefix, std::memory_order_relaxed);
  (void)this_thread_slot();
  if (g_installed.exchange(true) || kSanitized) return;
  struct sigaction action {};
  action.sa_handler = &on_fatal_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESETHAND | SA_NODEFER | SA_ONSTACK;
  for (const int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) {
    (void)::sigaction(sig, &action, nullptr);
  }
}

// A sample starts (`name` is its plan name) and ends; the watchdog calls these when it is armed
// and disarmed. The exit hooks are registered at the first sample, after the harness's own
// static objects: exit() runs hooks and destructors in reverse order of registration, so the
// line comes before the destructors of anything the sample still uses.
inline void begin_sample(const std::string& name) noexcept {
  name_sample(name);
  if (g_installed.load(std::memory_order_relaxed) && !g_exit_hooked.exchange(true)) {
    (void)std::atexit(&exit_hook);
    (void)std::at_quick_exit(&quick_exit_hook);
  }
  g_running.store(true, std::memory_order_release);
}
inline void end_sample() noexcept { g_running.store(false, std::memory_order_release); }

// Whether a line already said why the process ends (exit() during a sample).
inline bool cause_reported() noexcept { return g_quiet.load(); }

// Aborts without a second line: the caller has already written why.
[[noreturn]] inline void abort_quietly() noexcept {
  g_quiet.store(true);
  std::abort();
}

}  // namespace fault

}  // namespace hspc_harness
