#include <stdexcept>

#include "device_buffer.h"

namespace commbench {

DeviceBuffer::DeviceBuffer(size_t, int) {
  throw std::runtime_error("--memory cuda: this comm-bench was built without CUDA (comm found no nvcc)");
}

DeviceBuffer::~DeviceBuffer() = default;

void DeviceBuffer::upload(size_t, const void*, size_t) {}

void DeviceBuffer::download(void*, size_t, size_t) const {}

DeviceStream::DeviceStream(int) {
  throw std::runtime_error("--stream: this comm-bench was built without CUDA (comm found no nvcc)");
}

DeviceStream::~DeviceStream() = default;

void DeviceStream::synchronize() {}

}  // namespace commbench
