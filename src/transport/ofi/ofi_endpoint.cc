#include "transport/ofi/ofi_endpoint.h"

#include <algorithm>
#include <bit>
#include <cstdlib>
#include <cstring>

#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_errno.h>

#include "common/error.h"
#include "common/log.h"
#include "transport/ofi/ofi_transport.h"

namespace comm::transport {
namespace {

constexpr uint64_t kCaps = FI_TAGGED | FI_MSG | FI_DIRECTED_RECV;
// Modes that only constrain RMA keys and registrations, which this transport
// never makes. FI_MR_LOCAL (and FI_MR_HMEM) would require registering every
// buffer before each send/receive; such providers are refused.
constexpr uint64_t kToleratedMrModes = FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY | FI_MR_RAW | FI_MR_ENDPOINT;

char* duplicate(const std::string& text) {
  // fi_freeinfo releases hint strings with free().
  char* copy = strdup(text.c_str());
  if (copy == nullptr) fail(COMM_ERR_NO_MEMORY, "fabric: out of memory copying \"{}\"", text);
  return copy;
}

OfiInfo allocateHints(const EndpointConfig& config) {
  OfiInfo hints(fabricLibrary().dupinfo(nullptr));  // fi_allocinfo
  if (!hints) fail(COMM_ERR_NO_MEMORY, "fi_allocinfo: out of memory");
  hints->ep_attr->type = FI_EP_RDM;
  hints->caps = kCaps;
  hints->mode = FI_CONTEXT | FI_CONTEXT2;
  hints->domain_attr->threading = FI_THREAD_DOMAIN;
  hints->domain_attr->mr_mode = kToleratedMrModes;
  if (!config.provider.empty()) hints->fabric_attr->prov_name = duplicate(config.provider);
  return hints;
}

// Layered providers (tcp;ofi_rxm) ignore a domain name hint, so the domain
// is picked from the list fi_getinfo returns.
OfiInfo selectDomain(OfiInfo list, const EndpointConfig& config) {
  if (config.domain.empty()) return list;
  std::string available;
  for (const fi_info* info = list.get(); info != nullptr; info = info->next) {
    if (config.domain == info->domain_attr->name) {
      OfiInfo chosen(fabricLibrary().dupinfo(info));
      if (!chosen) fail(COMM_ERR_NO_MEMORY, "fi_dupinfo: out of memory");
      return chosen;
    }
    if (available.find(info->domain_attr->name) == std::string::npos) {
      available += fmt::format("{}{}", available.empty() ? "" : ", ", info->domain_attr->name);
    }
  }
  fail(COMM_ERR_TRANSPORT, "fabric: provider {} has no interface {} (it offers {})", config.provider, config.domain,
       available);
}

// ofi_rxm's dynamic receive buffers (its default) make a truncated message
// (a receive smaller than what was sent) drop the connection: both ranks then
// saw COMM_ERR_REMOTE instead of the receiver's COMM_ERR_MISMATCH, and the
// pair could not talk again (mp.p2p_test.tcp.n2 failed 8 runs in 20). Without
// them rxm reports FI_ETRUNC and keeps the connection, and comm-pingpong
// over tcp showed no difference in speed at any size either way. Set
// before libfabric reads its parameters (the first fi_getinfo); a value the
// user set wins.
void configureProviders() {
  static const bool configured = [] { return setenv("FI_OFI_RXM_ENABLE_DYN_RBUF", "0", 0) == 0; }();
  (void)configured;
}

int callGetInfo(const EndpointConfig& config, const fi_info* hints, fi_info** info) {
  configureProviders();
  const char* node = config.node.empty() ? nullptr : config.node.c_str();
  return fabricLibrary().getinfo(kOfiApiVersion, node, nullptr, node != nullptr ? FI_SOURCE : 0, hints, info);
}

std::string describeConfig(const EndpointConfig& config) {
  std::string text = fmt::format("provider \"{}\"", config.provider);
  if (!config.domain.empty()) text += fmt::format(" on interface {}", config.domain);
  if (!config.node.empty()) text += fmt::format(" bound to {}", config.node);
  const char* forced = std::getenv("FI_PROVIDER");
  if (forced != nullptr) text += fmt::format(" (FI_PROVIDER={})", forced);
  return text;
}

int tagBits(uint64_t memTagFormat) { return 64 - std::countl_zero(memTagFormat); }

// allocateHints plus the send-after-send ordering tagged messages rely on.
OfiInfo orderedHints(const EndpointConfig& config) {
  OfiInfo hints = allocateHints(config);
  hints->tx_attr->msg_order = FI_ORDER_SAS;
  hints->rx_attr->msg_order = FI_ORDER_SAS;
  return hints;
}

// Why the transport cannot use what `info` offers, or "" when it can.
std::string unusableBecause(const fi_info& info) {
  if (tagBits(info.ep_attr->mem_tag_format) < 64) {
    return fmt::format("carries {}-bit tags (mem_tag_format {:#x}), comm needs 64",
                       tagBits(info.ep_attr->mem_tag_format), info.ep_attr->mem_tag_format);
  }
  if ((info.domain_attr->mr_mode & ~kToleratedMrModes) != 0) {
    return fmt::format("requires registering local buffers (mr_mode {:#x}), which comm does not do",
                       info.domain_attr->mr_mode);
  }
  if (info.ep_attr->max_msg_size == 0) return "reports a maximum message size of 0";
  return "";
}

}  // namespace

std::vector<std::string> usableOfiProviders() {
  OfiInfo hints = orderedHints({});
  fi_info* found = nullptr;
  int rc = callGetInfo({}, hints.get(), &found);
  if (rc == -FI_ENODATA) return {};
  if (rc != 0) fail(COMM_ERR_TRANSPORT, "fi_getinfo for any provider failed: {} ({})", fabricError(-rc), rc);
  OfiInfo list(found);
  std::vector<std::string> names;
  for (const fi_info* info = list.get(); info != nullptr; info = info->next) {
    std::string name = info->fabric_attr->prov_name;
    if (unusableBecause(*info).empty() && std::find(names.begin(), names.end(), name) == names.end()) {
      names.push_back(name);
    }
  }
  return names;
}

OfiInfo OfiEndpoint::getInfo(const EndpointConfig& config) const {
  OfiInfo hints = orderedHints(config);
  fi_info* found = nullptr;
  int rc = callGetInfo(config, hints.get(), &found);
  if (rc == 0) return selectDomain(OfiInfo(found), config);
  if (rc != -FI_ENODATA) {
    fail(COMM_ERR_TRANSPORT, "fi_getinfo for {} failed: {} ({})", describeConfig(config), fabricError(-rc), rc);
  }
  // Ask again without the ordering, threading and registration constraints,
  // so the error can say whether the provider is missing or lacks one of them.
  OfiInfo loose = allocateHints(config);
  loose->mode = ~0ULL;
  loose->domain_attr->threading = FI_THREAD_UNSPEC;
  loose->domain_attr->mr_mode |= FI_MR_LOCAL | FI_MR_HMEM | FI_MR_MMU_NOTIFY | FI_MR_RMA_EVENT;
  if (callGetInfo(config, loose.get(), &found) != 0) {
    fail(COMM_ERR_TRANSPORT,
         "fabric: {} offers no reliable endpoint with tagged messages and directed receives (fi_getinfo: {})",
         describeConfig(config), fabricError(FI_ENODATA));
  }
  OfiInfo offered(found);
  std::string lacks;
  if ((offered->tx_attr->msg_order & FI_ORDER_SAS) == 0) lacks += " send-after-send ordering,";
  if ((offered->domain_attr->mr_mode & ~kToleratedMrModes) != 0) {
    lacks +=
        fmt::format(" use without registering local buffers (it asks mr_mode {:#x}),", offered->domain_attr->mr_mode);
  }
  if (lacks.empty()) lacks = " the requested threading or context modes,";
  lacks.pop_back();
  fail(COMM_ERR_NOT_SUPPORTED, "fabric: {} cannot provide{}", describeConfig(config), lacks);
}

OfiEndpoint::OfiEndpoint(const EndpointConfig& config) : info_(getInfo(config)) {
  provider_ = info_->fabric_attr->prov_name;
  if (std::string why = unusableBecause(*info_); !why.empty()) {
    fail(COMM_ERR_NOT_SUPPORTED, "fabric: provider {} {}", provider_, why);
  }
  maxMessageSize_ = info_->ep_attr->max_msg_size;

  auto require = [&](int rc, const char* call) {
    if (rc != 0) {
      fail(COMM_ERR_TRANSPORT, "{} on provider {} failed: {} ({})", call, provider_, fabricError(-rc), rc);
    }
  };
  require(fabricLibrary().fabric(info_->fabric_attr, fabric_.out(), nullptr), "fi_fabric");
  require(fi_domain(fabric_.get(), info_.get(), domain_.out(), nullptr), "fi_domain");

  fi_cq_attr cqAttr{};
  cqAttr.format = FI_CQ_FORMAT_TAGGED;
  cqAttr.wait_obj = FI_WAIT_NONE;
  require(fi_cq_open(domain_.get(), &cqAttr, cq_.out(), nullptr), "fi_cq_open");

  fi_av_attr avAttr{};
  avAttr.type = FI_AV_TABLE;
  require(fi_av_open(domain_.get(), &avAttr, av_.out(), nullptr), "fi_av_open");

  require(fi_endpoint(domain_.get(), info_.get(), ep_.out(), nullptr), "fi_endpoint");
  require(fi_ep_bind(ep_.get(), &cq_.get()->fid, FI_TRANSMIT | FI_RECV), "fi_ep_bind(cq)");
  require(fi_ep_bind(ep_.get(), &av_.get()->fid, 0), "fi_ep_bind(av)");
  require(fi_enable(ep_.get()), "fi_enable");

  size_t length = 0;
  int sizeQuery = fi_getname(&ep_.get()->fid, nullptr, &length);
  if (sizeQuery != -FI_ETOOSMALL) require(sizeQuery, "fi_getname");
  address_.resize(length);
  require(fi_getname(&ep_.get()->fid, address_.data(), &length), "fi_getname");
  address_.resize(length);

  if (log::enabled(log::Level::kDebug)) {
    char text[128] = {};
    size_t textLength = sizeof text;
    fi_av_straddr(av_.get(), address_.data(), text, &textLength);
    log::debug("fabric: opened {} endpoint, fabric {}, domain {}, address {}, max message {} bytes", provider_,
               info_->fabric_attr->name, info_->domain_attr->name, text, maxMessageSize_);
  }
}

fi_addr_t OfiEndpoint::insert(const std::vector<uint8_t>& address, int rank) {
  fi_addr_t result = FI_ADDR_NOTAVAIL;
  int rc = fi_av_insert(av_.get(), address.data(), 1, &result, 0, nullptr);
  if (rc != 1) {
    fail(COMM_ERR_TRANSPORT, "fi_av_insert of rank {}'s {} address failed: {} ({})", rank, provider_,
         rc < 0 ? fabricError(-rc) : "address rejected", rc);
  }
  return result;
}

bool OfiEndpoint::readError(fi_cq_err_entry& entry) {
  entry = fi_cq_err_entry{};
  return fi_cq_readerr(cq_.get(), &entry, 0) > 0;
}

std::string OfiEndpoint::describe(const fi_cq_err_entry& entry) const {
  char text[256] = {};
  const char* words = fi_cq_strerror(cq_.get(), entry.prov_errno, entry.err_data, text, sizeof text);
  const char* generic = fabricError(std::abs(entry.err));
  if (words == nullptr || std::strcmp(words, generic) == 0) return generic;
  return fmt::format("{} ({})", words, generic);
}

}  // namespace comm::transport
