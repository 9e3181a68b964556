// affinity.hpp on its own, every function instantiated.
#include "hspc/affinity.hpp"

int standalone_affinity() {
  hspc::pin_current_thread(-1);
  int calls = 0;
  hspc::run_with_stack_offset_bytes<0>([&] { ++calls; });
  hspc::run_with_stack_offset_bytes<4096>([&] { ++calls; });
  return calls + hspc::allowed_cpu_count() + static_cast<int>(hspc::spin_budget_ns(1));
}
