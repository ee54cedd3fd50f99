// Where the job's secret comes from (bootstrap/job_secret.h): the variable,
// else the file, created by the store's host and waited for by the rest.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <map>
#include <string>
#include <thread>

#include "bootstrap/job_secret.h"
#include "common/error.h"

// cmocka last: it defines a fail() macro that would rewrite comm::fail.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
extern "C" {
#include <cmocka.h>
}

using comm::Deadline;
using comm::bootstrap::findJobSecret;
using namespace std::chrono_literals;

namespace {

using Variables = std::map<std::string, std::string, std::less<>>;

comm::bootstrap::EnvLookup lookupIn(const Variables& variables) {
  return [&variables](std::string_view name) -> std::optional<std::string> {
    auto found = variables.find(name);
    return found != variables.end() ? std::optional<std::string>(found->second) : std::nullopt;
  };
}

struct TempDir {
  std::filesystem::path path = std::filesystem::temp_directory_path() / ("job_secret_test." + std::to_string(getpid()));
  TempDir() { std::filesystem::create_directories(path); }
  ~TempDir() { std::filesystem::remove_all(path); }
};

template <typename Call>
comm::Error errorOf(Call&& call) {
  try {
    call();
  } catch (const comm::Error& error) {
    return error;
  }
  fail_msg("expected a comm::Error");
  return comm::Error(COMM_OK, "");
}

void assertContains(const std::string& text, const std::string& part) {
  if (text.find(part) == std::string::npos) fail_msg("'%s' does not contain '%s'", text.c_str(), part.c_str());
}

void nothingSetIsNothingFound(void**) {
  Variables none;
  assert_false(findJobSecret(lookupIn(none), true, Deadline(1s)).has_value());
}

void theVariableWinsAndAShortOneIsRefused(void**) {
  TempDir dir;
  Variables variables{{"COMM_JOB_SECRET", "0123456789abcdef0123"},
                      {"COMM_JOB_SECRET_FILE", (dir.path / "secret").string()}};
  assert_string_equal(findJobSecret(lookupIn(variables), true, Deadline(1s))->c_str(), "0123456789abcdef0123");
  assert_false(std::filesystem::exists(dir.path / "secret"));
  variables["COMM_JOB_SECRET"] = "short";
  comm::Error error = errorOf([&] { findJobSecret(lookupIn(variables), true, Deadline(1s)); });
  assert_int_equal(error.status(), COMM_ERR_INVALID_ARGUMENT);
  assertContains(error.what(), "COMM_JOB_SECRET holds a job secret of 5 bytes; at least 16 are needed");
}

void theCreatorMakesAPrivateFileThatReadersWaitFor(void**) {
  TempDir dir;
  const std::string path = (dir.path / "secret").string();
  Variables variables{{"COMM_JOB_SECRET_FILE", path}};
  auto reader =
      std::async(std::launch::async, [&] { return findJobSecret(lookupIn(variables), false, Deadline(120s)); });
  assert_true(reader.wait_for(100ms) == std::future_status::timeout);
  std::optional<std::string> made = findJobSecret(lookupIn(variables), true, Deadline(1s));
  assert_true(made.has_value());
  assert_int_equal(made->size(), 64);
  struct stat status {};
  assert_int_equal(stat(path.c_str(), &status), 0);
  assert_int_equal(status.st_mode & 0777, 0600);
  assert_true(reader.get() == made);
  // A second creator finds it and keeps it.
  assert_true(findJobSecret(lookupIn(variables), true, Deadline(1s)) == made);
  assert_int_equal(std::distance(std::filesystem::directory_iterator(dir.path), {}), 1);
}

void aReaderGivesUpNamingTheFile(void**) {
  TempDir dir;
  Variables variables{{"COMM_JOB_SECRET_FILE", (dir.path / "never").string()}};
  comm::Error error = errorOf([&] { findJobSecret(lookupIn(variables), false, Deadline(50ms)); });
  assert_int_equal(error.status(), COMM_ERR_TIMEOUT);
  assertContains(error.what(), (dir.path / "never").string() + " does not exist");
}

// A link could point at a file others can write: only the file itself counts.
void aSymbolicLinkIsRefused(void**) {
  TempDir dir;
  const std::string real = (dir.path / "real").string();
  std::ofstream(real) << "0123456789abcdef0123\n";
  chmod(real.c_str(), 0600);
  std::filesystem::create_symlink(real, dir.path / "link");
  Variables variables{{"COMM_JOB_SECRET_FILE", (dir.path / "link").string()}};
  comm::Error error = errorOf([&] { findJobSecret(lookupIn(variables), false, Deadline(1s)); });
  assert_int_equal(error.status(), COMM_ERR_INVALID_ARGUMENT);
  assertContains(error.what(), "cannot be opened");
  variables["COMM_JOB_SECRET_FILE"] = real;
  assert_string_equal(findJobSecret(lookupIn(variables), false, Deadline(1s))->c_str(), "0123456789abcdef0123");
}

}  // namespace

int main() {
  const CMUnitTest tests[] = {
      cmocka_unit_test(nothingSetIsNothingFound),
      cmocka_unit_test(theVariableWinsAndAShortOneIsRefused),
      cmocka_unit_test(theCreatorMakesAPrivateFileThatReadersWaitFor),
      cmocka_unit_test(aReaderGivesUpNamingTheFile),
      cmocka_unit_test(aSymbolicLinkIsRefused),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
