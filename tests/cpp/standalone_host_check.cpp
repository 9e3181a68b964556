// host_check.hpp on its own, every function instantiated.
#include "hspc/host_check.hpp"

int standalone_host_check() {
  constexpr hspc::TunedHost kTuned = {"0", "0", "c++", "linux", "unknown", 1};
  const hspc::HostMatch match = hspc::host_matches(kTuned, "/nonexistent/cpuinfo");
  char name[8];
  const bool read = hspc::read_cpu_model_name(name, sizeof(name));
  return static_cast<bool>(match) + read + hspc::online_cpu_count() +
         static_cast<bool>(hspc::compare_host(kTuned, name, read, 1));
}
