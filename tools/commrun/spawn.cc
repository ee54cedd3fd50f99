#include "spawn.h"

#include <fcntl.h>
#include <limits.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <stdexcept>
#include <system_error>

#include <fmt/format.h>

namespace commrun {
namespace {

struct Pipe {
  UniqueFd read;
  UniqueFd write;
};

Pipe makePipe() {
  int ends[2];
  if (pipe2(ends, O_CLOEXEC) != 0) throw std::system_error(errno, std::generic_category(), "commrun: pipe2");
  Pipe made{UniqueFd(ends[0]), UniqueFd(ends[1])};
  fcntl(made.read.get(), F_SETFL, O_NONBLOCK);
  return made;
}

std::vector<char*> pointersTo(const std::vector<std::string>& strings) {
  std::vector<char*> pointers;
  for (const std::string& text : strings) pointers.push_back(const_cast<char*>(text.c_str()));
  pointers.push_back(nullptr);
  return pointers;
}

// Between fork and exec only async-signal-safe calls are allowed (commrun
// runs the store server thread), so everything is prepared by the parent.
[[noreturn]] void becomeChild(const ChildSpec& spec, pid_t parent, int input, int output, int error, char* const* argv,
                              char* const* envp, const std::string& execFailure, const std::string& bindFailure) {
  setpgid(0, 0);
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) _exit(127);  // commrun died before prctl took effect
  if (dup2(input, STDIN_FILENO) < 0 || dup2(output, STDOUT_FILENO) < 0 || dup2(error, STDERR_FILENO) < 0) {
    _exit(127);
  }
  // commrun ignores SIGPIPE and blocks the signals it reads from a
  // signalfd; both would survive exec.
  signal(SIGPIPE, SIG_DFL);
  sigprocmask(SIG_SETMASK, &spec.signalMask, nullptr);
  if (spec.cpus && sched_setaffinity(0, sizeof(*spec.cpus), &*spec.cpus) != 0) {
    [[maybe_unused]] ssize_t ignored = write(STDERR_FILENO, bindFailure.data(), bindFailure.size());
  }
  execve(spec.program.c_str(), argv, envp);
  [[maybe_unused]] ssize_t ignored = write(STDERR_FILENO, execFailure.data(), execFailure.size());
  _exit(127);
}

}  // namespace

Child spawnChild(const ChildSpec& spec) {
  Pipe out = makePipe();
  Pipe err = makePipe();
  Pipe in;
  if (spec.input.empty()) {
    in.read = UniqueFd(open("/dev/null", O_RDONLY | O_CLOEXEC));
    if (!in.read.valid()) throw std::system_error(errno, std::generic_category(), "commrun: open /dev/null");
  } else {
    if (spec.input.size() > PIPE_BUF) throw std::runtime_error("commrun: a child's input is larger than a pipe holds");
    in = makePipe();
    fcntl(in.read.get(), F_SETFL, 0);  // the child reads it blocking
  }
  std::vector<char*> argv = pointersTo(spec.arguments);
  std::vector<char*> envp = pointersTo(spec.environment);
  const std::string execFailure = fmt::format("commrun: cannot execute {}\n", spec.program);
  const std::string bindFailure = "commrun: could not bind to the chosen core; running unbound\n";
  const pid_t parent = getpid();

  pid_t pid = fork();
  if (pid < 0) throw std::system_error(errno, std::generic_category(), "commrun: fork");
  if (pid == 0) {
    becomeChild(spec, parent, in.read.get(), out.write.get(), err.write.get(), argv.data(), envp.data(), execFailure,
                bindFailure);
  }
  // Also from the parent: whoever runs first, the group exists before
  // commrun might signal it.
  setpgid(pid, pid);
  // A child that is already gone (EPIPE) is reported by its exit status.
  if (!spec.input.empty()) [[maybe_unused]]
    ssize_t written = write(in.write.get(), spec.input.data(), spec.input.size());
  return Child{pid, std::move(out.read), std::move(err.read)};
}

std::optional<std::string> findProgram(const std::string& name) {
  auto executable = [](const std::string& path) {
    struct stat info {};
    return stat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode) && access(path.c_str(), X_OK) == 0;
  };
  if (name.find('/') != std::string::npos) return executable(name) ? std::optional(name) : std::nullopt;
  const char* path = std::getenv("PATH");
  std::string_view directories = path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin";
  for (;;) {
    const size_t colon = directories.find(':');
    std::string directory(directories.substr(0, colon));
    std::string candidate = (directory.empty() ? std::string(".") : directory) + "/" + name;
    if (executable(candidate)) return candidate;
    if (colon == std::string_view::npos) return std::nullopt;
    directories.remove_prefix(colon + 1);
  }
}

}  // namespace commrun
