#include "bootstrap/store_table.h"

#include <charconv>
#include <utility>

#include <fmt/format.h>

namespace comm::bootstrap {

std::string okFrame(uint64_t id) { return FrameWriter().u64(id).u8(uint8_t(StoreStatus::kOk)).finish(); }

std::string valueFrame(uint64_t id, std::string_view value) {
  return FrameWriter().u64(id).u8(uint8_t(StoreStatus::kOk)).bytes(value).finish();
}

std::string errorFrame(uint64_t id, std::string_view message) {
  return FrameWriter().u64(id).u8(uint8_t(StoreStatus::kError)).bytes(message).finish();
}

void StoreTable::handle(int client, StoreRequest request) {
  const uint64_t id = request.id;
  switch (request.op) {
    case StoreOp::kSet: {
      std::string& key = request.keys[0];
      if (!hold(client, id, key, request.value.size())) return;
      const bool created = data_.insert_or_assign(key, std::move(request.value)).second;
      replies_.reply(client, okFrame(id));
      if (created) keyCreated(key);
      return;
    }
    case StoreOp::kSetIfAbsent: {
      std::string& key = request.keys[0];
      if (auto found = data_.find(key); found != data_.end()) {
        replies_.reply(client, valueFrame(id, found->second));
        return;
      }
      if (!hold(client, id, key, request.value.size())) return;
      replies_.reply(client, valueFrame(id, data_.emplace(key, std::move(request.value)).first->second));
      keyCreated(key);
      return;
    }
    case StoreOp::kGet: {
      std::string& key = request.keys[0];
      if (auto found = data_.find(key); found != data_.end()) {
        replies_.reply(client, valueFrame(id, found->second));
      } else {
        std::string wanted = key;
        park(client, id, request.op, std::move(wanted), std::move(request.keys));
      }
      return;
    }
    case StoreOp::kWait: {
      std::vector<std::string> missing;
      std::unordered_set<std::string_view> seen;
      for (const std::string& key : request.keys) {
        if (!data_.contains(key) && seen.insert(key).second) missing.push_back(key);
      }
      if (missing.empty()) {
        replies_.reply(client, okFrame(id));
      } else {
        park(client, id, request.op, {}, std::move(missing));
      }
      return;
    }
    case StoreOp::kAdd: add(client, id, request.keys[0], request.delta); return;
    case StoreOp::kErasePrefix: {
      const std::string& prefix = request.keys[0];
      auto entry = data_.lower_bound(prefix);
      while (entry != data_.end() && entry->first.starts_with(prefix)) {
        bytesHeld_ -= entry->first.size() + entry->second.size();
        entry = data_.erase(entry);
      }
      replies_.reply(client, okFrame(id));
      return;
    }
    case StoreOp::kCheck: {
      auto found = data_.find(request.keys[0]);
      replies_.reply(client, found != data_.end() ? valueFrame(id, found->second)
                                                  : FrameWriter().u64(id).u8(uint8_t(StoreStatus::kMissing)).finish());
      return;
    }
  }
}

bool StoreTable::hold(int client, uint64_t id, const std::string& key, size_t valueBytes) {
  auto found = data_.find(key);
  const size_t before = found == data_.end() ? 0 : key.size() + found->second.size();
  const size_t after = bytesHeld_ - before + key.size() + valueBytes;
  if (after > limits_.maxBytesHeld) {
    replies_.refuse(client, id,
                    fmt::format("set('{}'): holding {} more bytes would pass the store's limit of {} bytes", key,
                                after - bytesHeld_, limits_.maxBytesHeld));
    return false;
  }
  bytesHeld_ = after;
  return true;
}

void StoreTable::add(int client, uint64_t id, const std::string& key, int64_t delta) {
  int64_t value = 0;
  auto found = data_.find(key);
  if (found != data_.end()) {
    const std::string& text = found->second;
    auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc() || end != text.data() + text.size()) {
      replies_.reply(client, errorFrame(id, fmt::format("add('{}'): the value there is not an integer", key)));
      return;
    }
  }
  if (__builtin_add_overflow(value, delta, &value)) {
    replies_.reply(client, errorFrame(id, fmt::format("add('{}', {}): the result overflows int64", key, delta)));
    return;
  }
  std::string text = std::to_string(value);
  if (!hold(client, id, key, text.size())) return;
  const bool created = found == data_.end();
  data_[key] = std::move(text);
  replies_.reply(client, FrameWriter().u64(id).u8(uint8_t(StoreStatus::kOk)).i64(value).finish());
  if (created) keyCreated(key);
}

void StoreTable::park(int client, uint64_t id, StoreOp op, std::string key, std::vector<std::string> missing) {
  size_t& parked = parkedPerClient_[client];
  if (parked >= limits_.maxParkedPerClient) {
    return replies_.refuse(
        client, id,
        fmt::format("{} of its requests already wait for keys, the limit per client", limits_.maxParkedPerClient));
  }
  const uint64_t waiterId = nextWaiter_++;
  for (const std::string& absent : missing) waitersByKey_[absent].insert(waiterId);
  parkedKeys_ += missing.size();
  const size_t left = missing.size();
  waiters_.emplace(waiterId, Waiter{client, id, op, std::move(key), std::move(missing), left});
  ++parked;
}

void StoreTable::keyCreated(const std::string& key) {
  auto parked = waitersByKey_.extract(key);
  if (parked.empty()) return;
  parkedKeys_ -= parked.mapped().size();
  for (uint64_t waiterId : parked.mapped()) {
    auto found = waiters_.find(waiterId);
    if (found == waiters_.end() || --found->second.left > 0) continue;
    const Waiter& waiter = found->second;
    replies_.reply(waiter.client, waiter.op == StoreOp::kGet ? valueFrame(waiter.requestId, data_.at(waiter.key))
                                                             : okFrame(waiter.requestId));
    if (--parkedPerClient_[waiter.client] == 0) parkedPerClient_.erase(waiter.client);
    forget(waiterId, waiter, key);
    waiters_.erase(found);
  }
}

void StoreTable::forget(uint64_t waiterId, const Waiter& waiter, std::string_view created) {
  for (const std::string& key : waiter.missing) {
    if (key == created) continue;
    auto list = waitersByKey_.find(key);
    if (list == waitersByKey_.end()) continue;
    parkedKeys_ -= list->second.erase(waiterId);
    if (list->second.empty()) waitersByKey_.erase(list);
  }
}

void StoreTable::dropClient(int client) {
  std::erase_if(waiters_, [&](const auto& entry) {
    if (entry.second.client != client) return false;
    forget(entry.first, entry.second);
    return true;
  });
  parkedPerClient_.erase(client);
}

}  // namespace comm::bootstrap
