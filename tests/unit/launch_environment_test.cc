// detectLaunch over maps of variables: every launcher, their precedence, and
// every kind of error naming its variable.
#include <cstdlib>
#include <map>
#include <string>

#include "bootstrap/launch_environment.h"
#include "bootstrap/slurm_nodelist.h"
#include "common/error.h"

// cmocka last: it defines a fail() macro that would rewrite comm::fail. Its
// header has no extern "C" of its own.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
extern "C" {
#include <cmocka.h>
}

using comm::bootstrap::detectLaunch;
using comm::bootstrap::firstSlurmHost;
using comm::bootstrap::LaunchInfo;

namespace {

using Vars = std::map<std::string, std::string, std::less<>>;

LaunchInfo detect(const Vars& vars) {
  return detectLaunch([&](std::string_view name) -> std::optional<std::string> {
    auto found = vars.find(name);
    if (found == vars.end()) return std::nullopt;
    return found->second;
  });
}

// detect() must fail with INVALID_ARGUMENT and a message containing `parts`.
void expectInvalid(const Vars& vars, std::initializer_list<std::string> parts) {
  try {
    detect(vars);
  } catch (const comm::Error& error) {
    assert_int_equal(error.status(), COMM_ERR_INVALID_ARGUMENT);
    const std::string message = error.what();
    for (const std::string& part : parts) {
      if (message.find(part) == std::string::npos) {
        fail_msg("'%s' does not contain '%s'", message.c_str(), part.c_str());
      }
    }
    return;
  }
  fail_msg("expected an INVALID_ARGUMENT error");
}

void expectInfo(const LaunchInfo& info, const char* launcher, int rank, int size, int localRank, int localSize,
                const char* addr, int port, bool hosted) {
  assert_string_equal(info.launcher.c_str(), launcher);
  assert_int_equal(info.rank, rank);
  assert_int_equal(info.worldSize, size);
  assert_int_equal(info.localRank, localRank);
  assert_int_equal(info.localWorldSize, localSize);
  assert_string_equal(info.masterAddr.c_str(), addr);
  assert_int_equal(info.masterPort, port);
  assert_int_equal(info.storeHostedByLauncher, hosted);
}

const Vars kCommrun = {{"COMMRUN", "1"},
                       {"COMM_RANK", "3"},
                       {"COMM_WORLD_SIZE", "8"},
                       {"COMM_LOCAL_RANK", "1"},
                       {"COMM_LOCAL_WORLD_SIZE", "2"},
                       {"COMM_MASTER_ADDR", "10.0.0.1"},
                       {"COMM_MASTER_PORT", "4000"}};

const Vars kTorchrun = {{"RANK", "5"},
                        {"WORLD_SIZE", "6"},
                        {"LOCAL_RANK", "2"},
                        {"LOCAL_WORLD_SIZE", "3"},
                        {"MASTER_ADDR", "node0"},
                        {"MASTER_PORT", "29500"}};

Vars with(Vars vars, const Vars& more) {
  for (const auto& [name, value] : more) vars[name] = value;
  return vars;
}

Vars without(Vars vars, const std::string& name) {
  vars.erase(name);
  return vars;
}

void noVariablesIsASingleProcessWorld(void**) {
  expectInfo(detect({}), "none", 0, 1, -1, -1, "", 0, false);
  expectInfo(detect({{"COMM_MASTER_ADDR", "h"}, {"COMM_MASTER_PORT", "7"}}), "none", 0, 1, -1, -1, "h", 7, false);
}

void onlyTheLookupIsConsulted(void**) {
  setenv("RANK", "7", 1);
  setenv("WORLD_SIZE", "8", 1);
  expectInfo(detect({}), "none", 0, 1, -1, -1, "", 0, false);
  unsetenv("RANK");
  unsetenv("WORLD_SIZE");
}

void commrunVariables(void**) { expectInfo(detect(kCommrun), "commrun", 3, 8, 1, 2, "10.0.0.1", 4000, true); }

void commVariablesWithoutCommrunAreConfiguration(void**) {
  expectInfo(detect(without(kCommrun, "COMMRUN")), "config", 3, 8, 1, 2, "10.0.0.1", 4000, false);
  expectInfo(detect(with(kCommrun, {{"COMMRUN", "0"}})), "config", 3, 8, 1, 2, "10.0.0.1", 4000, false);
  // A single-rank configuration needs no store address.
  expectInfo(detect({{"COMM_RANK", "0"}, {"COMM_WORLD_SIZE", "1"}}), "config", 0, 1, -1, -1, "", 0, false);
}

void torchrunStoreTakesThePortAfterMasterPort(void**) {
  expectInfo(detect(kTorchrun), "torchrun", 5, 6, 2, 3, "node0", 29501, false);
}

void msrunStoreTakesThePortAfterSchedulerPort(void**) {
  expectInfo(detect({{"RANK_ID", "1"}, {"RANK_SIZE", "4"}, {"MS_SCHED_HOST", "127.0.0.1"}, {"MS_SCHED_PORT", "8118"}}),
             "msrun", 1, 4, -1, -1, "127.0.0.1", 8119, false);
}

void slurmNeedsCommMasterVariables(void**) {
  const Vars slurm = {{"SLURM_PROCID", "2"},          {"SLURM_NTASKS", "4"},        {"SLURM_LOCALID", "0"},
                      {"SLURM_NTASKS_PER_NODE", "2"}, {"COMM_MASTER_ADDR", "head"}, {"COMM_MASTER_PORT", "5000"}};
  expectInfo(detect(slurm), "slurm", 2, 4, 0, 2, "head", 5000, false);
  // A per-node list is not a size; the local size is then unknown.
  expectInfo(detect(with(slurm, {{"SLURM_NTASKS_PER_NODE", "2(x2)"}})), "slurm", 2, 4, 0, -1, "head", 5000, false);
  expectInfo(detect(without(slurm, "SLURM_NTASKS_PER_NODE")), "slurm", 2, 4, 0, -1, "head", 5000, false);
  // An allocation shell has SLURM_NTASKS but no SLURM_PROCID: not a launch.
  expectInfo(detect({{"SLURM_NTASKS", "4"}}), "none", 0, 1, -1, -1, "", 0, false);
}

void slurmGivesTheStoreWithoutCommVariables(void**) {
  // srun with no comm variable: the step's first host, a port from the job id.
  const Vars srun = {{"SLURM_PROCID", "2"},
                     {"SLURM_NTASKS", "4"},
                     {"SLURM_LOCALID", "0"},
                     {"SLURM_NTASKS_PER_NODE", "2"},
                     {"SLURM_STEP_NODELIST", "node[07-08]"},
                     {"SLURM_JOB_NODELIST", "node[01-08]"},
                     {"SLURM_NODELIST", "node[01-08]"},
                     {"SLURM_JOB_ID", "123456"}};
  expectInfo(detect(srun), "slurm", 2, 4, 0, 2, "node07", 15000 + 123456 % 15000, false);
  // Without a step list the job's, then the old name.
  expectInfo(detect(without(srun, "SLURM_STEP_NODELIST")), "slurm", 2, 4, 0, 2, "node01", 18456, false);
  expectInfo(detect(without(without(srun, "SLURM_STEP_NODELIST"), "SLURM_JOB_NODELIST")), "slurm", 2, 4, 0, 2, "node01",
             18456, false);
  // COMM_MASTER_* still win.
  expectInfo(detect(with(srun, {{"COMM_MASTER_ADDR", "head"}})), "slurm", 2, 4, 0, 2, "head", 18456, false);
  expectInfo(detect(with(srun, {{"COMM_MASTER_PORT", "5000"}})), "slurm", 2, 4, 0, 2, "node07", 5000, false);
  // What cannot be derived is named.
  expectInvalid(without(srun, "SLURM_JOB_ID"), {"set COMM_MASTER_PORT", "node07", "SLURM_STEP_NODELIST"});
  expectInvalid(with(srun, {{"SLURM_STEP_NODELIST", "node[07-08"}}),
                {"SLURM_STEP_NODELIST='node[07-08' is not a Slurm host list", "set COMM_MASTER_ADDR"});
  expectInvalid(with(srun, {{"SLURM_JOB_ID", "x"}}), {"SLURM_JOB_ID='x' is not an integer"});
  // Slurm hands no secret: a file per job step in the shared $HOME.
  assert_string_equal(detect(with(srun, {{"HOME", "/home/u"}, {"SLURM_STEP_ID", "3"}})).secretFile.c_str(),
                      "/home/u/.comm/slurm-123456.3.secret");
  assert_true(detect(without(srun, "HOME")).secretFile.empty());
}

void slurmHostListsFirstHost(void**) {
  const std::pair<const char*, const char*> lists[] = {{"node[01-04,07],gpu5", "node01"},
                                                       {"rack[2-3]-n[5,9]", "rack2-n5"},
                                                       {"head,node1", "head"},
                                                       {"single", "single"},
                                                       {"n[009]", "n009"},
                                                       {"a-b[10-11]", "a-b10"}};
  for (const auto& [list, first] : lists) {
    std::optional<std::string> got = firstSlurmHost(list);
    if (!got || *got != first) fail_msg("%s: got %s, expected %s", list, got ? got->c_str() : "nothing", first);
  }
  for (const char* bad : {"", ",node1", "node[01-04", "node]", "node[]", "node[a-b]"}) {
    if (firstSlurmHost(bad)) fail_msg("'%s' is not a host list, but gave %s", bad, firstSlurmHost(bad)->c_str());
  }
}

void openMpiSaysWhichVariablesToSet(void**) {
  expectInvalid({{"OMPI_COMM_WORLD_RANK", "1"}, {"OMPI_COMM_WORLD_SIZE", "2"}, {"SLURM_NODELIST", "node[1-2]"}},
                {"(launched by mpirun)", "Open MPI does not say where rank 0 runs",
                 "set COMM_MASTER_ADDR to rank 0's host and COMM_MASTER_PORT", "mpirun -x COMM_MASTER_ADDR="});
}

void openMpiNeedsCommMasterVariables(void**) {
  const Vars mpi = {{"OMPI_COMM_WORLD_RANK", "3"},       {"OMPI_COMM_WORLD_SIZE", "4"},
                    {"OMPI_COMM_WORLD_LOCAL_RANK", "1"}, {"OMPI_COMM_WORLD_LOCAL_SIZE", "2"},
                    {"COMM_MASTER_ADDR", "head"},        {"COMM_MASTER_PORT", "5000"}};
  expectInfo(detect(mpi), "mpirun", 3, 4, 1, 2, "head", 5000, false);
}

void innermostLauncherWins(void**) {
  // srun torchrun ...: SLURM_PROCID numbers torchrun agents, RANK the workers.
  expectInfo(detect(with(kTorchrun, {{"SLURM_PROCID", "1"}, {"SLURM_NTASKS", "2"}})), "torchrun", 5, 6, 2, 3, "node0",
             29501, false);
  // mpirun inside sbatch: every process inherits the batch step's SLURM_PROCID=0.
  const Vars mpiInSlurm = {{"OMPI_COMM_WORLD_RANK", "3"}, {"OMPI_COMM_WORLD_SIZE", "4"}, {"SLURM_PROCID", "0"},
                           {"SLURM_NTASKS", "1"},         {"COMM_MASTER_ADDR", "h"},     {"COMM_MASTER_PORT", "1"}};
  expectInfo(detect(mpiInSlurm), "mpirun", 3, 4, -1, -1, "h", 1, false);
  // torchrun before msrun.
  expectInfo(detect(with(kTorchrun, {{"RANK_ID", "0"}, {"RANK_SIZE", "1"}})), "torchrun", 5, 6, 2, 3, "node0", 29501,
             false);
  // commrun's ranks inside an allocation: commrun's variables describe them.
  expectInfo(detect(with(kCommrun, {{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "1"}, {"RANK", "0"}, {"WORLD_SIZE", "1"}})),
             "commrun", 3, 8, 1, 2, "10.0.0.1", 4000, true);
}

void commMasterVariablesOverrideTheLaunchers(void**) {
  expectInfo(detect(with(kTorchrun, {{"COMM_MASTER_ADDR", "other"}})), "torchrun", 5, 6, 2, 3, "other", 29501, false);
  // An explicit COMM_MASTER_PORT is used as given, not + 1.
  expectInfo(detect(with(kTorchrun, {{"COMM_MASTER_PORT", "7000"}})), "torchrun", 5, 6, 2, 3, "node0", 7000, false);
}

void configAgreeingWithTheLauncherIsAccepted(void**) {
  expectInfo(detect(with(kTorchrun, {{"COMM_RANK", "5"}, {"COMM_WORLD_SIZE", "6"}})), "config", 5, 6, 2, 3, "node0",
             29501, false);
}

void missingVariablesAreNamed(void**) {
  expectInvalid({{"RANK", "1"}}, {"RANK is set but WORLD_SIZE is missing"});
  expectInvalid({{"WORLD_SIZE", "2"}}, {"WORLD_SIZE is set but RANK is missing"});
  expectInvalid({{"RANK_ID", "1"}}, {"RANK_SIZE is missing"});
  expectInvalid({{"SLURM_PROCID", "1"}}, {"SLURM_NTASKS is missing"});
  expectInvalid({{"OMPI_COMM_WORLD_SIZE", "2"}}, {"OMPI_COMM_WORLD_RANK is missing"});
  expectInvalid(without(kCommrun, "COMM_WORLD_SIZE"), {"COMM_RANK is set but COMM_WORLD_SIZE is missing"});
  expectInvalid({{"COMMRUN", "1"}}, {"COMMRUN is set", "COMM_RANK"});
  expectInvalid({{"COMM_LOCAL_RANK", "0"}}, {"COMM_LOCAL_RANK is set", "COMM_RANK"});
}

void malformedVariablesAreNamed(void**) {
  expectInvalid(with(kCommrun, {{"COMM_RANK", "abc"}}), {"COMM_RANK='abc' is not an integer"});
  expectInvalid(with(kCommrun, {{"COMM_WORLD_SIZE", "8 "}}), {"COMM_WORLD_SIZE='8 ' is not an integer"});
  expectInvalid(with(kCommrun, {{"COMM_WORLD_SIZE", ""}}), {"COMM_WORLD_SIZE='' is not an integer"});
  expectInvalid(with(kTorchrun, {{"MASTER_PORT", "http"}}), {"MASTER_PORT='http' is not an integer"});
  expectInvalid(with(kTorchrun, {{"LOCAL_RANK", "1.5"}}), {"LOCAL_RANK='1.5' is not an integer"});
  expectInvalid({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "1"}, {"SLURM_LOCALID", "x"}},
                {"SLURM_LOCALID='x' is not an integer"});
}

void outOfRangeVariablesAreNamed(void**) {
  expectInvalid(with(kCommrun, {{"COMM_RANK", "8"}}), {"COMM_RANK=8 is out of range", "COMM_WORLD_SIZE is 8"});
  expectInvalid(with(kCommrun, {{"COMM_RANK", "-1"}}), {"COMM_RANK=-1 is out of range"});
  expectInvalid(with(kCommrun, {{"COMM_WORLD_SIZE", "0"}}), {"COMM_WORLD_SIZE=0 is out of range"});
  expectInvalid(with(kCommrun, {{"COMM_WORLD_SIZE", "99999999999"}}), {"COMM_WORLD_SIZE=99999999999 is out of range"});
  expectInvalid(with(kCommrun, {{"COMM_LOCAL_RANK", "2"}}), {"COMM_LOCAL_RANK=2 is out of range"});
  expectInvalid(with(kCommrun, {{"COMM_LOCAL_WORLD_SIZE", "9"}}), {"COMM_LOCAL_WORLD_SIZE=9 is out of range"});
  expectInvalid(with(kCommrun, {{"COMM_MASTER_PORT", "70000"}}), {"COMM_MASTER_PORT=70000 is out of range"});
  expectInvalid(with(kCommrun, {{"COMM_MASTER_PORT", "0"}}), {"COMM_MASTER_PORT=0 is out of range"});
  expectInvalid(with(kTorchrun, {{"MASTER_PORT", "65535"}}), {"MASTER_PORT=65535 leaves no port"});
}

void contradictionsNameBothVariables(void**) {
  expectInvalid(with(kTorchrun, {{"COMM_RANK", "1"}, {"COMM_WORLD_SIZE", "6"}}),
                {"COMM_RANK=1 contradicts RANK=5", "torchrun"});
  expectInvalid(
      {{"COMM_RANK", "1"}, {"COMM_WORLD_SIZE", "4"}, {"OMPI_COMM_WORLD_RANK", "1"}, {"OMPI_COMM_WORLD_SIZE", "8"}},
      {"COMM_WORLD_SIZE=4 contradicts OMPI_COMM_WORLD_SIZE=8"});
  expectInvalid(with(kTorchrun, {{"COMM_RANK", "5"}, {"COMM_WORLD_SIZE", "6"}, {"COMM_LOCAL_RANK", "0"}}),
                {"COMM_LOCAL_RANK=0 contradicts LOCAL_RANK=2"});
}

void aMultiRankWorldNeedsAStoreAddress(void**) {
  expectInvalid({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "2"}}, {"set COMM_MASTER_ADDR"});
  expectInvalid({{"OMPI_COMM_WORLD_RANK", "0"}, {"OMPI_COMM_WORLD_SIZE", "2"}, {"COMM_MASTER_ADDR", "h"}},
                {"set COMM_MASTER_PORT"});
  expectInvalid(without(kTorchrun, "MASTER_ADDR"), {"set COMM_MASTER_ADDR"});
  expectInvalid(without(kCommrun, "COMM_MASTER_PORT"), {"set COMM_MASTER_PORT"});
  // A single rank needs none.
  expectInfo(detect({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "1"}}), "slurm", 0, 1, -1, -1, "", 0, false);
}

}  // namespace

int main() {
  const CMUnitTest tests[] = {
      cmocka_unit_test(noVariablesIsASingleProcessWorld),
      cmocka_unit_test(onlyTheLookupIsConsulted),
      cmocka_unit_test(commrunVariables),
      cmocka_unit_test(commVariablesWithoutCommrunAreConfiguration),
      cmocka_unit_test(torchrunStoreTakesThePortAfterMasterPort),
      cmocka_unit_test(msrunStoreTakesThePortAfterSchedulerPort),
      cmocka_unit_test(slurmNeedsCommMasterVariables),
      cmocka_unit_test(slurmGivesTheStoreWithoutCommVariables),
      cmocka_unit_test(slurmHostListsFirstHost),
      cmocka_unit_test(openMpiSaysWhichVariablesToSet),
      cmocka_unit_test(openMpiNeedsCommMasterVariables),
      cmocka_unit_test(innermostLauncherWins),
      cmocka_unit_test(commMasterVariablesOverrideTheLaunchers),
      cmocka_unit_test(configAgreeingWithTheLauncherIsAccepted),
      cmocka_unit_test(missingVariablesAreNamed),
      cmocka_unit_test(malformedVariablesAreNamed),
      cmocka_unit_test(outOfRangeVariablesAreNamed),
      cmocka_unit_test(contradictionsNameBothVariables),
      cmocka_unit_test(aMultiRankWorldNeedsAStoreAddress),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
