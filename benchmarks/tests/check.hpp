// The harness tests' one assertion: a failed check names itself and aborts (plain executables
// under `meson test`, rigtorp style: no framework).
#pragma once

#include <cstdio>
#include <cstdlib>

#define HARNESS_CHECK(cond)                                                         \
  do {                                                                              \
    if (!(cond)) {                                                                  \
      std::fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
      std::abort();                                                                 \
    }                                                                               \
  } while (0)

// ThreadSanitizer runs threaded code ~10x slower: scale event counts down under it.
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define HARNESS_TEST_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer) || __has_feature(address_sanitizer)
#define HARNESS_TEST_SANITIZED 1
#endif
#endif

namespace harness_test {
#ifdef HARNESS_TEST_SANITIZED
constexpr unsigned long long kScale = 16;
#else
constexpr unsigned long long kScale = 1;
#endif
}  // namespace harness_test
