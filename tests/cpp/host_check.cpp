// The run-time host check: the model name read from the recorded cpuinfo texts of
// tests/data/cpuinfo (each whole from its file, and fed a byte at a time), which hspc-gen's own
// reader must agree with (tests/integration/test_check.py reads the same table); an unreadable
// file; every reason the comparison gives; and the live host compared with what it reports.
// Usage: host_check CPUINFO_DIR
#include "hspc/host_check.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "test_support.hpp"

namespace {

std::string read_file(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  HSPC_CHECK(file.good(), "cannot read %s", path.c_str());
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
}

void check_model_names(const std::string& folder) {
  std::istringstream table(read_file(folder + "/expected.tsv"));
  int checked = 0;
  for (std::string row; std::getline(table, row);) {
    if (row.empty() || row[0] == '#') continue;
    const std::size_t tab = row.find('\t');
    HSPC_CHECK(tab != std::string::npos, "expected.tsv: no tab in '%s'", row.c_str());
    const std::string path = folder + "/" + row.substr(0, tab);
    const std::string want = row.substr(tab + 1);
    char name[hspc::HostMatch::kModelNameBytes];
    HSPC_CHECK(hspc::read_cpu_model_name(name, sizeof(name), path.c_str()), "%s", path.c_str());
    HSPC_CHECK(want == name, "%s: got '%s', want '%s'", path.c_str(), name, want.c_str());
    hspc::detail::CpuinfoScanner bytewise;
    for (const char ch : read_file(path)) {
      if (bytewise.feed(&ch, 1)) break;
    }
    char fed[hspc::HostMatch::kModelNameBytes];
    bytewise.finish(fed, sizeof(fed));
    HSPC_CHECK(want == fed, "%s, a byte at a time: got '%s'", path.c_str(), fed);
    ++checked;
  }
  HSPC_CHECK(checked >= 10, "only %d cpuinfo texts", checked);
  char small[6];
  HSPC_CHECK(hspc::read_cpu_model_name(small, sizeof(small), (folder + "/x86.txt").c_str()), "x86");
  HSPC_CHECK(std::strcmp(small, "AMD E") == 0, "cut to the buffer: got '%s'", small);
}

void check_unreadable() {
  char name[32];
  errno = 42;
  HSPC_CHECK(!hspc::read_cpu_model_name(name, sizeof(name), "/nonexistent/cpuinfo"), "missing");
  HSPC_CHECK(std::strcmp(name, "unknown") == 0 && errno == 42, "unknown, errno kept");
  constexpr hspc::TunedHost kTuned = {"0.1.0", "0123456789abcdef", "c++", "linux", "CPU A", 4};
  const hspc::HostMatch match = hspc::host_matches(kTuned, "/nonexistent/cpuinfo");
  HSPC_CHECK(!match && !match.cpuinfo_read && !match.model_name_matches, "unreadable: no match");
  HSPC_CHECK(std::strstr(match.reason, "/proc/cpuinfo could not be read") != nullptr, "%s",
             match.reason);
}

void check_reasons() {
  constexpr hspc::TunedHost kTuned = {"0.1.0", "0123456789abcdef", "c++", "linux", "CPU A", 4};
  const hspc::HostMatch same = hspc::compare_host(kTuned, "CPU A", true, 4);
  HSPC_CHECK(static_cast<bool>(same) && same.reason[0] == '\0', "match: '%s'", same.reason);
  HSPC_CHECK(std::strcmp(same.model_name, "CPU A") == 0 && same.logical_cpus == 4, "this host");
  const struct {
    const char* model;
    bool read;
    int cpus;
    const char* reason;
  } differ[] = {
      {"CPU B", true, 4, "the CPU model differs from the tuning host's"},
      {"CPU A", true, 8, "the number of online CPUs differs from the tuning host's"},
      {"CPU B", true, 8, "the CPU model and the number of online CPUs differ"},
      {"CPU A ", true, 4, "the CPU model differs"},
      {"unknown", false, 4, "the CPU model is unknown: /proc/cpuinfo could not be read"},
      {"unknown", false, -1, "could not be read) and the number of online CPUs differs"},
  };
  for (const auto& d : differ) {
    const hspc::HostMatch match = hspc::compare_host(kTuned, d.model, d.read, d.cpus);
    HSPC_CHECK(!match, "%s, %d CPUs: no match", d.model, d.cpus);
    HSPC_CHECK(std::strstr(match.reason, d.reason) != nullptr, "%s, %d: '%s'", d.model, d.cpus,
               match.reason);
  }
}

// The live host against what it reports through a second way in (the standard library's count),
// from several threads at once: the check is meant to be callable from any of them.
void check_live_host() {
  char name[hspc::HostMatch::kModelNameBytes];
  HSPC_CHECK(hspc::read_cpu_model_name(name, sizeof(name)), "the live /proc/cpuinfo reads");
  const int cpus = static_cast<int>(std::thread::hardware_concurrency());
  HSPC_CHECK(hspc::online_cpu_count() == cpus, "online %d, hardware_concurrency %d",
             hspc::online_cpu_count(), cpus);
  const hspc::TunedHost live = {"0.1.0", "0123456789abcdef", "c++", "linux", name, cpus};
  bool seen[4] = {};
  std::thread others[4];
  for (int i = 0; i < 4; ++i) {
    others[i] = std::thread([&, i] { seen[i] = static_cast<bool>(hspc::host_matches(live)); });
  }
  bool all = static_cast<bool>(hspc::host_matches(live));
  for (int i = 0; i < 4; ++i) {
    others[i].join();
    all = all && seen[i];
  }
  HSPC_CHECK(all, "the live host matches what it reports");
  std::printf("this host: '%s', %d online CPUs\n", name, cpus);
}

}  // namespace

int main(int argc, char** argv) {
  HSPC_CHECK(argc == 2, "usage: host_check CPUINFO_DIR");
  check_model_names(argv[1]);
  check_unreadable();
  check_reasons();
  check_live_host();
  std::printf("ok: host check\n");
  return 0;
}
