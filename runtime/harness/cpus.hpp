// The CPUs this process may run on: what the probes, the developer programs and the harness's
// tests place their threads on.
#pragma once

#include <sched.h>

#include <vector>

namespace hspc_harness {

// The CPUs in this process's affinity mask, in order (empty if it cannot be read).
inline std::vector<int> allowed_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (::sched_getaffinity(0, sizeof(set), &set) != 0) return cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
  }
  return cpus;
}

}  // namespace hspc_harness
