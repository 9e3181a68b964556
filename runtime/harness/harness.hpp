// The measurement harness the developer benchmarks (benchmarks/) and the tuner's rendered benchmark
// include. See plan.hpp for the plan format and variant.hpp for the variant table.
//
//   sides.hpp      workload, sample record, per-event producer/consumer code
//   app.hpp        the calls into the user's own per-event code (HSPC_APP_PRODUCER / _CONSUMER)
//   fault.hpp      which side's code ran when a sample died: signal, exit and watchdog reports
//   sample.hpp     throughput, paced latency and round-trip samples through a contender
//   baselines.hpp  producer_alone, consumer_alone, p0_parallel, optimal, achievable, upper_bound
//   pairs.hpp      pairs and fanout samples (threads: many_threads.hpp)
//   contender.hpp  the interface a channel or peer queue is driven through
//   register.hpp   Google Benchmark registration, flags, plan_main
#pragma once

#include "harness/app.hpp"
#include "harness/baselines.hpp"
#include "harness/contender.hpp"
#include "harness/event.hpp"
#include "harness/fault.hpp"
#include "harness/many_threads.hpp"
#include "harness/pairs.hpp"
#include "harness/plan.hpp"
#include "harness/register.hpp"
#include "harness/sample.hpp"
#include "harness/sides.hpp"
#include "harness/stack_offset.hpp"
#include "harness/thread_stats.hpp"
#include "harness/variant.hpp"
#include "harness/watchdog.hpp"
#include "harness/work.hpp"
#include "harness/worker.hpp"
