// allocation_meter.hpp — measures the heap memory a piece of code allocates, by replacing malloc.
//
// Include it in exactly ONE source file of a program (chapter 7's checks and lesson each do): it
// defines malloc, free, calloc, realloc and the aligned allocators, which forward to glibc's own
// (__libc_malloc, ...) after counting. Every allocation passes through them: Eigen's matrices
// (std::malloc), std::vector and operator new (which call malloc), so nothing escapes the meter.
// Under AddressSanitizer, which owns malloc, the sanitizer's allocation hooks count instead.
//
//   scalebook::AllocationMeter meter;       // starts counting
//   run_something();
//   const auto reading = meter.stop();      // peak live bytes above the start, largest block, count
/// \file
/// \brief Measures the heap memory a piece of code allocates (AllocationMeter), by replacing malloc:
/// include it in exactly one source file of a program.
#pragma once

#include <malloc.h>

#include <atomic>
#include <cstddef>
#include <cstdint>

//! \cond allocation_meter_internals
namespace scalebook::allocation_meter_detail {

inline std::atomic<bool> active{false};
inline std::atomic<std::int64_t> live{0};        // bytes allocated minus bytes freed since start
inline std::atomic<std::int64_t> peak{0};        // the largest value of live since start
inline std::atomic<std::int64_t> largest{0};     // the largest single block since start
inline std::atomic<std::int64_t> allocations{0};

inline void on_allocate(std::size_t bytes) {
  if (!active.load(std::memory_order_relaxed)) return;
  const auto size = static_cast<std::int64_t>(bytes);
  const std::int64_t now = live.fetch_add(size, std::memory_order_relaxed) + size;
  if (now > peak.load(std::memory_order_relaxed)) peak.store(now, std::memory_order_relaxed);
  if (size > largest.load(std::memory_order_relaxed)) largest.store(size, std::memory_order_relaxed);
  allocations.fetch_add(1, std::memory_order_relaxed);
}

inline void on_free(std::size_t bytes) {
  if (!active.load(std::memory_order_relaxed)) return;
  live.fetch_sub(static_cast<std::int64_t>(bytes), std::memory_order_relaxed);
}

}  // namespace scalebook::allocation_meter_detail
//! \endcond

namespace scalebook {

/// What an AllocationMeter saw between its start and stop() (sizes as the allocator rounds them).
struct AllocationReading {
  std::int64_t peak_bytes = 0;     ///< most bytes live at once, counted from the start
  std::int64_t largest_block = 0;  ///< the largest single allocation
  std::int64_t allocations = 0;    ///< how many allocations
};

/// Counts heap allocations from its construction to stop(). One at a time.
class AllocationMeter {
 public:
  /// Starts counting: from here, every allocation and free is recorded.
  AllocationMeter() {
    namespace d = allocation_meter_detail;
    d::live = 0;
    d::peak = 0;
    d::largest = 0;
    d::allocations = 0;
    d::active = true;
  }
  /// Stops counting and returns what was seen since the construction.
  AllocationReading stop() {
    namespace d = allocation_meter_detail;
    d::active = false;
    return {d::peak.load(), d::largest.load(), d::allocations.load()};
  }
  /// Stops counting, if stop() has not.
  ~AllocationMeter() { allocation_meter_detail::active = false; }
  AllocationMeter(const AllocationMeter&) = delete;             ///< one meter, one count
  AllocationMeter& operator=(const AllocationMeter&) = delete;  ///< one meter, one count
};

}  // namespace scalebook

//! \cond allocation_meter_internals
#if defined(__SANITIZE_ADDRESS__)
// The sanitizer runtime's allocator interface, declared here: GCC 12 on Debian ships the runtime
// but not <sanitizer/allocator_interface.h> (only clang's packages do).
extern "C" {
std::size_t __sanitizer_get_allocated_size(const volatile void* p);
int __sanitizer_install_malloc_and_free_hooks(void (*malloc_hook)(const volatile void*, std::size_t),
                                              void (*free_hook)(const volatile void*));
}

namespace scalebook::allocation_meter_detail {
inline void asan_malloc_hook(const volatile void*, std::size_t size) { on_allocate(size); }
inline void asan_free_hook(const volatile void* p) {
  on_free(__sanitizer_get_allocated_size(const_cast<const void*>(p)));
}
inline const int hooks_installed = __sanitizer_install_malloc_and_free_hooks(asan_malloc_hook, asan_free_hook);
}  // namespace scalebook::allocation_meter_detail

#else

extern "C" {
void* __libc_malloc(std::size_t);
void* __libc_calloc(std::size_t, std::size_t);
void* __libc_realloc(void*, std::size_t);
void* __libc_memalign(std::size_t, std::size_t);
void __libc_free(void*);

void* malloc(std::size_t bytes) noexcept {
  void* p = __libc_malloc(bytes);
  if (p != nullptr) scalebook::allocation_meter_detail::on_allocate(malloc_usable_size(p));
  return p;
}

void free(void* p) noexcept {
  if (p == nullptr) return;
  scalebook::allocation_meter_detail::on_free(malloc_usable_size(p));
  __libc_free(p);
}

void* calloc(std::size_t count, std::size_t bytes) noexcept {
  void* p = __libc_calloc(count, bytes);
  if (p != nullptr) scalebook::allocation_meter_detail::on_allocate(malloc_usable_size(p));
  return p;
}

void* realloc(void* old, std::size_t bytes) noexcept {
  const std::size_t old_size = old != nullptr ? malloc_usable_size(old) : 0;
  void* p = __libc_realloc(old, bytes);
  if (p != nullptr || bytes == 0) scalebook::allocation_meter_detail::on_free(old_size);
  if (p != nullptr) scalebook::allocation_meter_detail::on_allocate(malloc_usable_size(p));
  return p;
}

void* memalign(std::size_t alignment, std::size_t bytes) noexcept {
  void* p = __libc_memalign(alignment, bytes);
  if (p != nullptr) scalebook::allocation_meter_detail::on_allocate(malloc_usable_size(p));
  return p;
}

void* aligned_alloc(std::size_t alignment, std::size_t bytes) noexcept { return memalign(alignment, bytes); }

int posix_memalign(void** out, std::size_t alignment, std::size_t bytes) noexcept {
  if (alignment < sizeof(void*) || (alignment & (alignment - 1)) != 0) return 22;  // EINVAL
  void* p = memalign(alignment, bytes);
  if (p == nullptr) return 12;  // ENOMEM
  *out = p;
  return 0;
}
}  // extern "C"

#endif
//! \endcond
