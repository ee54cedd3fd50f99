// comm_config_*, comm_init, comm_destroy, comm_abort and the queries.
#include <memory>
#include <string>

#include "algo/selection/overrides.h"
#include "api/guard.h"
#include "api/making.h"
#include "api/objects.h"
#include "core/groups.h"
#include "core/settings.h"
#include "core/world.h"
#include "cuda/device.h"

using comm::fail;
using comm::api::guard;
using comm::api::guardOut;
using comm::api::require;

namespace {

std::map<std::string, std::string> configValues(const comm_config_t* config) {
  if (config == nullptr) return {};
  comm::api::liveConfigs().check(config, "config", "config");
  return config->values;
}

std::shared_ptr<comm::core::Communicator> joinWorld(const std::map<std::string, std::string>& values) {
  comm::Settings settings = comm::Settings::load(values);
  auto world = comm::core::World::create(settings, comm::algo::parseAlgorithmOverrides(settings.get("algo")));
  return comm::core::worldCommunicator(world);
}

}  // namespace

extern "C" {

COMM_API comm_status_t comm_config_create(comm_config_t** out) {
  return guardOut("comm_config_create", out, [&] {
    require(out, "out");
    auto* config = new comm_config();
    comm::api::liveConfigs().add(config);
    *out = config;
  });
}

COMM_API comm_status_t comm_config_destroy(comm_config_t* config) {
  return guard("comm_config_destroy", [&] {
    if (config == nullptr) return;
    if (!comm::api::liveConfigs().remove(config)) {
      fail(COMM_ERR_INVALID_USAGE, "config {} was destroyed before or never created", static_cast<void*>(config));
    }
    delete config;
  });
}

COMM_API comm_status_t comm_config_set(comm_config_t* config, const char* key, const char* value) {
  return guard("comm_config_set", [&] {
    comm::api::liveConfigs().check(config, "config", "config");
    require(key, "key");
    require(value, "value");
    if (!comm::isSettingKey(key)) fail(COMM_ERR_INVALID_ARGUMENT, "'{}' is not a setting (comm-info lists them)", key);
    config->values[key] = value;
  });
}

COMM_API comm_status_t comm_init(comm_t** out, const comm_config_t* config) {
  return guardOut("comm_init", out, [&] {
    require(out, "out");
    *out = comm::api::makeCommunicatorObject(joinWorld(configValues(config)));
  });
}

COMM_API comm_status_t comm_init_async(comm_t** out, const comm_config_t* config, comm_handle_t** handle) {
  return guardOut("comm_init_async", out, [&] {
    require(out, "out");
    require(handle, "handle");
    comm::api::makeLater(out, handle, comm::api::runOnOwnThread,
                         [values = configValues(config)] { return joinWorld(values); });
  });
}

COMM_API comm_status_t comm_destroy(comm_t* comm) {
  return guard("comm_destroy", [&] {
    if (comm == nullptr) return;
    if (!comm::api::liveCommunicators().remove(comm)) {
      fail(COMM_ERR_INVALID_USAGE, "communicator {} was destroyed before or never created", static_cast<void*>(comm));
    }
    comm::api::destroyCommunicatorObject(comm);
  });
}

COMM_API comm_status_t comm_abort(comm_t* comm) {
  return guard("comm_abort", [&] {
    comm::api::liveCommunicators().check(comm, "communicator", "comm");
    // One still being made: its handle completes with COMM_ERR_ABORTED now.
    if (!comm->ready.load(std::memory_order_acquire) &&
        comm::api::abandon(*comm->making, COMM_ERR_ABORTED, "the communicator was aborted while it was being made"))
      return;
    comm::core::Communicator& c = comm::api::communicator(comm);
    c.abort();
    if (c.id() == 0) c.world().abort();
  });
}

COMM_API comm_status_t comm_rank(int* out, const comm_t* comm) {
  return guard("comm_rank", [&] { *require(out, "out") = comm::api::communicator(comm).rank(); });
}

COMM_API comm_status_t comm_size(int* out, const comm_t* comm) {
  return guard("comm_size", [&] { *require(out, "out") = comm::api::communicator(comm).size(); });
}

COMM_API comm_status_t comm_local_rank(int* out, const comm_t* comm) {
  return guard("comm_local_rank", [&] { *require(out, "out") = comm::api::communicator(comm).localRank(); });
}

COMM_API comm_status_t comm_local_size(int* out, const comm_t* comm) {
  return guard("comm_local_size", [&] { *require(out, "out") = comm::api::communicator(comm).localSize(); });
}

COMM_API comm_status_t comm_node_count(int* out, const comm_t* comm) {
  return guard("comm_node_count", [&] { *require(out, "out") = comm::api::communicator(comm).nodes().count(); });
}

COMM_API comm_status_t comm_node_id(int* out, const comm_t* comm) {
  return guard("comm_node_id", [&] {
    require(out, "out");
    const comm::core::Communicator& c = comm::api::communicator(comm);
    *out = c.nodes().nodeOf[c.rank()];
  });
}

COMM_API comm_status_t comm_name(const char** out, const comm_t* comm) {
  return guardOut("comm_name", out, [&] { *require(out, "out") = comm::api::communicator(comm).name().c_str(); });
}

COMM_API comm_status_t comm_set_timeout(comm_t* comm, int64_t timeout_ms) {
  return guard("comm_set_timeout", [&] {
    comm::core::Communicator& c = comm::api::communicator(comm);
    if (timeout_ms <= 0) fail(COMM_ERR_INVALID_ARGUMENT, "timeout_ms {} must be positive", timeout_ms);
    c.setTimeout(std::chrono::milliseconds(timeout_ms));
  });
}

COMM_API comm_status_t comm_timeout(int64_t* out_ms, const comm_t* comm) {
  return guard("comm_timeout", [&] { *require(out_ms, "out_ms") = comm::api::communicator(comm).timeout().count(); });
}

COMM_API comm_status_t comm_set_stream(comm_t* comm, void* stream) {
  return guard("comm_set_stream", [&] {
    comm::core::Communicator& c = comm::api::communicator(comm);
    if (stream == nullptr) {
      c.setStream(nullptr, -1);
      return;
    }
    const comm::cuda::DeviceCount& devices = comm::cuda::deviceCount();
    if (devices.count == 0)
      fail(COMM_ERR_NOT_SUPPORTED, "a CUDA stream, but no CUDA device is visible: {}", devices.reason);
    c.setStream(stream, comm::cuda::streamDevice(stream));
  });
}

COMM_API comm_status_t comm_stream(void** out, const comm_t* comm) {
  return guardOut("comm_stream", out, [&] { *require(out, "out") = comm::api::communicator(comm).stream(); });
}

COMM_API comm_status_t comm_failed_rank(int* out, const comm_t* comm) {
  return guard("comm_failed_rank", [&] {
    int* rank = require(out, "out");
    const auto failure = comm::api::communicator(comm).world().firstFailure();
    *rank = failure ? failure->worldRank : -1;
  });
}

}  // extern "C"
