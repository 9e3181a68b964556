// The measurement harness the developer benchmarks (bench/) and the tuner's rendered benchmark
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

#include "bench/app.hpp"
#include "bench/baselines.hpp"
#include "bench/contender.hpp"
#include "bench/event.hpp"
#include "bench/fault.hpp"
#include "bench/many_threads.hpp"
#include "bench/pairs.hpp"
#include "bench/plan.hpp"
#include "bench/register.hpp"
#include "bench/sample.hpp"
#include "bench/sides.hpp"
#include "bench/stack_offset.hpp"
#include "bench/thread_stats.hpp"
#include "bench/variant.hpp"
#include "bench/watchdog.hpp"
#include "bench/work.hpp"
#include "bench/worker.hpp"
