// Device memory beside a host buffer, for --memory cuda: comm-bench fills
// and checks data on the host (its buffers), and the timed calls use the
// device copy; and the stream of --stream. device_buffer.cc has the CUDA runtime; device_buffer_none.cc
// stands in where comm was built without CUDA.
#pragma once

#include <cstddef>
#include <cstdint>

namespace commbench {

class DeviceBuffer {
 public:
  // `bytes` of memory of CUDA device `device`; throws std::runtime_error
  // naming the runtime's error, or saying this comm-bench has no CUDA.
  DeviceBuffer(size_t bytes, int device);
  ~DeviceBuffer();
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  std::byte* data() const { return data_; }
  void upload(size_t offset, const void* from, size_t bytes);
  void download(void* to, size_t offset, size_t bytes) const;

 private:
  std::byte* data_ = nullptr;
};

// --stream: a CUDA stream the calls are ordered on.
class DeviceStream {
 public:
  // A stream of device `device`; throws like DeviceBuffer.
  explicit DeviceStream(int device);
  ~DeviceStream();
  DeviceStream(const DeviceStream&) = delete;
  DeviceStream& operator=(const DeviceStream&) = delete;

  // The cudaStream_t, for comm_set_stream.
  void* handle() const { return stream_; }
  // Waits until the device has done everything enqueued on it.
  void synchronize();

 private:
  void* stream_ = nullptr;
};

}  // namespace commbench
