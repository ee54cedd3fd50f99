#include "options.h"

#include <CLI/CLI.hpp>
#include <charconv>
#include <fstream>
#include <sstream>

#include "comm.h"

namespace commrun {
namespace {

// One host per line; blank lines and everything after '#' are ignored.
std::vector<std::string> readHostfile(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw CLI::ValidationError("--hostfile", "cannot read " + path);
  std::vector<std::string> hosts;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    std::istringstream words(line.substr(0, line.find('#')));
    std::string host, extra;
    if (!(words >> host)) continue;
    if (words >> extra) {
      throw CLI::ValidationError("--hostfile", path + ":" + std::to_string(number) + ": '" + extra +
                                                   "' after the host name; give one host name per line (-n sets the "
                                                   "ranks per host)");
    }
    hosts.push_back(host);
  }
  if (hosts.empty()) throw CLI::ValidationError("--hostfile", path + " names no host");
  return hosts;
}

}  // namespace

Options parseOptions(int argc, char** argv) {
  Options options;
  CLI::App app(
      "commrun -n N [options] program [arguments...]\n\n"
      "Start N ranks of a comm program on this node (or on each host of --hosts), prefix their output with the "
      "rank, and stop them all when one fails.",
      "commrun");
  // Everything from the program name on belongs to the program.
  app.prefix_command();
  app.set_version_flag("--version", std::string("commrun ") + comm_version_string(), "print the version and exit");
  app.add_option("-n,--nproc-per-node", options.ranksPerNode, "ranks to start on this node")
      ->required()
      ->check(CLI::PositiveNumber);
  app.add_option("--nnodes", options.nodes, "nodes in the job (one commrun per node)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--node-rank", options.nodeRank, "this node's index, 0..nnodes-1; node 0 hosts the store")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--master-addr", options.masterAddr,
                 "host of node 0, where the rendezvous store listens (--hosts: the first host)")
      ->capture_default_str();
  app.add_option("--master-port", options.masterPort,
                 "port of the rendezvous store (default: any free port, "
                 "single node only; 29500 with --hosts)");
  std::string hostfile;
  auto* hosts = app.add_option("--hosts", options.hosts,
                               "start one commrun per host, through the launcher agent: ranks 0..N-1 on the first "
                               "host, N..2N-1 on the second...; the store on the first")
                    ->delimiter(',');
  auto* file =
      app.add_option("--hostfile", hostfile, "as --hosts, one host per line ('#' starts a comment)")->excludes(hosts);
  app.add_option("--launcher-agent", options.launcherAgent,
                 "with --hosts: the command that runs a command line on a host, as AGENT HOST COMMAND-LINE "
                 "(like ssh, the default, or Open MPI's plm_rsh_agent)")
      ->capture_default_str();
  app.add_option("--log-dir", options.logDir, "also write each rank's output to DIR/rank.<r>.log");
  app.add_flag("--bind-core", options.bindCore, "bind each rank to one core, round robin over this node's cores");
  app.add_option("--timeout", options.timeoutSeconds, "stop every rank after S seconds and exit 124")
      ->check(CLI::PositiveNumber);
  app.add_flag("--keep-going", options.keepGoing,
               "when a rank fails, leave the others running (a job that revokes, shrinks and goes on); the last "
               "line still names every failure");
  app.add_option("--replace", options.replace,
                 "implies --keep-going; start a process in a failed rank's place, at most N times: the same rank, "
                 "program and environment plus COMM_JOIN=1 and COMM_LAUNCH_SLOT (a new number, at least the world "
                 "size, also in its prefix and log name); exit 0 when every slot's last process exits 0")
      ->type_name("N")
      ->check(CLI::Validator(
          [](std::string& value) {
            int number = 0;
            const char* end = value.data() + value.size();
            auto [stop, error] = std::from_chars(value.data(), end, number);
            if (error == std::errc() && stop == end && number > 0) return std::string();
            return "'" + value + "' is not a positive whole number (the most failed ranks this commrun replaces)";
          },
          ""));
  app.add_option("--grace", options.graceSeconds,
                 "after a rank fails, seconds the others get to exit by themselves before SIGTERM")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();

  try {
    app.parse(argc, argv);
    options.command = app.remaining();
    if (!options.command.empty() && options.command.front() == "--") options.command.erase(options.command.begin());
    if (options.command.empty()) throw CLI::ValidationError("program", "no program to run was given");
    if (options.replace > 0) options.keepGoing = true;
    if (options.nodeRank >= options.nodes) {
      throw CLI::ValidationError("--node-rank", "must be below --nnodes (" + std::to_string(options.nodes) + ")");
    }
    if (file->count() > 0) options.hosts = readHostfile(hostfile);
    if (hosts->count() > 0 && options.hosts.empty()) throw CLI::ValidationError("--hosts", "names no host");
    if (options.acrossHosts()) {
      if (app.count("--nnodes") > 0 || app.count("--node-rank") > 0) {
        throw CLI::ValidationError("--hosts", "sets the nodes itself; leave out --nnodes and --node-rank");
      }
      for (const std::string& host : options.hosts) {
        if (host.empty()) throw CLI::ValidationError("--hosts", "has an empty host name");
      }
      if (app.count("--master-addr") == 0) options.masterAddr = options.hosts.front();
      if (options.masterPort == 0) options.masterPort = kHostsPort;
    }
    if (options.nodes > 1 && (app.count("--master-addr") == 0 || options.masterPort == 0)) {
      throw CLI::ValidationError("--nnodes",
                                 "a multi-node job needs --master-addr and --master-port, the same "
                                 "on every node");
    }
  } catch (const CLI::ParseError& error) {
    int code = app.exit(error);
    // Usage errors exit 2 by convention, keeping 1 and 124+ for the ranks' fates.
    throw UsageExit{code == 0 ? 0 : 2};
  }
  return options;
}

}  // namespace commrun
