#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstddef>
#include <cstring>

namespace hspc {

// What a generated header records of the host it was tuned on (its kTunedOn). `hspc-gen check`
// reads every field back from the header; the run-time check compares model_name and
// logical_cpus only, the two a running program can read cheaply and without a compiler.
// Field names and order are what hspc-gen's provenance parser expects: keep them in step.
struct TunedHost {
  const char* hspc_gen_version;
  const char* fingerprint;  // the tuning host's fingerprint, as `hspc-gen host` prints it
  const char* compiler;     // the first line of `c++ --version` on the tuning host
  const char* kernel;
  // /proc/cpuinfo's first "model name" (x86), else "Model" (ARM), else "cpu model" (MIPS), else
  // "unknown": the rule hspc-gen reads it by.
  const char* model_name;
  int logical_cpus;  // online logical CPUs
};

// The running host beside a TunedHost; true when both the CPU model and the number of online
// CPUs are the tuning host's.
struct HostMatch {
  // A longer model name (none seen: x86 brand strings are at most 48 bytes) is cut to fit, and
  // then never matches.
  static constexpr std::size_t kModelNameBytes = 256;

  bool model_name_matches;
  bool logical_cpus_matches;
  bool cpuinfo_read;  // false: /proc/cpuinfo could not be read, so this host's model is "unknown"
  int logical_cpus;   // this host's online CPUs; -1 if the kernel will not say
  char model_name[kModelNameBytes];  // this host's, NUL-terminated
  const char* reason;                // what differs, in words (static storage); "" when nothing

  explicit operator bool() const noexcept { return model_name_matches && logical_cpus_matches; }
};

namespace detail {

// The model name in /proc/cpuinfo text fed in pieces of any size (a line may span two reads), by
// hspc-gen's rule: each key's first line counts, and the first non-empty of "model name",
// "Model", "cpu model" wins.
class CpuinfoScanner {
 public:
  // Returns true once more text cannot change the answer (x86: the first "model name" line).
  bool feed(const char* text, std::size_t size) noexcept {
    for (std::size_t i = 0; i < size; ++i) {
      if (text[i] != '\n') {
        if (line_size_ < kLineBytes) line_[line_size_++] = text[i];
        continue;
      }
      end_line();
      if (seen_[0] && found_[0][0] != '\0') return true;
    }
    return false;
  }

  // The answer, after the last piece (a last line without a newline counts); "unknown" if none.
  void finish(char* out, std::size_t size) noexcept {
    end_line();
    for (std::size_t key = 0; key < kKeys; ++key) {
      if (seen_[key] && found_[key][0] != '\0') {
        copy_cut(found_[key], std::strlen(found_[key]), out, size);
        return;
      }
    }
    copy_cut("unknown", 7, out, size);
  }

  static void copy_cut(const char* from, std::size_t length, char* out, std::size_t size) noexcept {
    if (size == 0) return;
    const std::size_t kept = length < size - 1 ? length : size - 1;
    std::memcpy(out, from, kept);
    out[kept] = '\0';
  }

 private:
  static constexpr std::size_t kKeys = 3;
  // Long enough for every key and name; the rest of a longer line ("flags") is not needed.
  static constexpr std::size_t kLineBytes = 512;

  static bool space(char c) noexcept {
    return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
  }

  void end_line() noexcept {
    const char* begin = line_;
    const char* end = line_ + line_size_;
    line_size_ = 0;
    const char* colon =
        static_cast<const char*>(std::memchr(begin, ':', static_cast<std::size_t>(end - begin)));
    if (colon == nullptr) return;
    const char* key_end = colon;
    while (begin < key_end && space(*begin)) ++begin;
    while (key_end > begin && space(key_end[-1])) --key_end;
    const char* value = colon + 1;
    while (value < end && space(*value)) ++value;
    while (end > value && space(end[-1])) --end;
    static constexpr const char* kNames[kKeys] = {"model name", "Model", "cpu model"};
    for (std::size_t key = 0; key < kKeys; ++key) {
      const std::size_t length = std::strlen(kNames[key]);
      if (seen_[key] || static_cast<std::size_t>(key_end - begin) != length ||
          std::memcmp(begin, kNames[key], length) != 0) {
        continue;
      }
      seen_[key] = true;
      copy_cut(value, static_cast<std::size_t>(end - value), found_[key],
               HostMatch::kModelNameBytes);
    }
  }

  char line_[kLineBytes];
  std::size_t line_size_ = 0;
  bool seen_[kKeys] = {};
  char found_[kKeys][HostMatch::kModelNameBytes];
};

}  // namespace detail

// The CPU model name from a cpuinfo file (the live one by default; a path of its own in tests),
// into out (NUL-terminated, cut to size). Returns false, with "unknown", if it cannot be read.
// Stops reading at the first "model name" line, so on x86 the kernel formats one CPU's entry, not
// every CPU's. Leaves errno as it found it.
inline bool read_cpu_model_name(char* out, std::size_t size,
                                const char* cpuinfo_path = "/proc/cpuinfo") noexcept {
  const int saved_errno = errno;
  detail::CpuinfoScanner scanner;
  bool read_all = false;
  int fd;
  do {
    fd = ::open(cpuinfo_path, O_RDONLY | O_CLOEXEC);
  } while (fd < 0 && errno == EINTR);
  if (fd >= 0) {
    char chunk[2048];
    for (;;) {
      const ssize_t got = ::read(fd, chunk, sizeof(chunk));
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0 || scanner.feed(chunk, static_cast<std::size_t>(got))) {
        read_all = got >= 0;
        break;
      }
    }
    ::close(fd);
  }
  if (read_all) {
    scanner.finish(out, size);
  } else {
    detail::CpuinfoScanner::copy_cut("unknown", 7, out, size);
  }
  errno = saved_errno;
  return read_all;
}

// The online logical CPUs (what the tuner counts: /sys/devices/system/cpu/online, not this
// process's affinity mask); -1 if the kernel will not say.
inline int online_cpu_count() noexcept {
  const long online = ::sysconf(_SC_NPROCESSORS_ONLN);
  return online > 0 && online <= INT_MAX ? static_cast<int>(online) : -1;
}

// The comparison itself, given what the running host reported.
inline HostMatch compare_host(const TunedHost& tuned, const char* model_name, bool cpuinfo_read,
                              int logical_cpus) noexcept {
  HostMatch match{};
  detail::CpuinfoScanner::copy_cut(model_name, std::strlen(model_name), match.model_name,
                                   HostMatch::kModelNameBytes);
  match.cpuinfo_read = cpuinfo_read;
  match.logical_cpus = logical_cpus;
  match.model_name_matches = std::strcmp(match.model_name, tuned.model_name) == 0;
  match.logical_cpus_matches = logical_cpus == tuned.logical_cpus;
  static constexpr const char* kReasons[2][2] = {
      {"the CPU model and the number of online CPUs differ from the tuning host's",
       "the CPU model differs from the tuning host's"},
      {"the number of online CPUs differs from the tuning host's", ""},
  };
  match.reason = kReasons[match.model_name_matches][match.logical_cpus_matches];
  if (!match.model_name_matches && !cpuinfo_read) {
    match.reason = match.logical_cpus_matches
                       ? "the CPU model is unknown: /proc/cpuinfo could not be read"
                       : "the CPU model is unknown (/proc/cpuinfo could not be read) and the "
                         "number of online CPUs differs from the tuning host's";
  }
  return match;
}

// Whether this process runs on the kind of host the channel was tuned on. Cost: one open and a
// few reads of cpuinfo plus one sysconf (which reads a sysfs file): system calls, microseconds,
// so call it at start-up, not per event. No allocation, no exception, about 4 KiB of stack;
// safe from any thread at once.
inline HostMatch host_matches(const TunedHost& tuned,
                              const char* cpuinfo_path = "/proc/cpuinfo") noexcept {
  char model_name[HostMatch::kModelNameBytes];
  const bool read = read_cpu_model_name(model_name, sizeof(model_name), cpuinfo_path);
  return compare_host(tuned, model_name, read, online_cpu_count());
}

}  // namespace hspc
