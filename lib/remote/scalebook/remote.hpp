// scalebook/remote.hpp — calling a chapter's functions in another process, for grading.
//
// The grader's checks run in a trusted process that is never linked with a submission's code.
// Each contract function is linked there as a *proxy* that sends its arguments over a pipe to a
// *worker*: the submission's code linked with a small server, started in a sandbox. The worker
// only computes: arguments in, a result (and the new value of every non-const reference argument)
// or an exception's type and message out. A worker that crashes, hangs, exits, or writes garbage
// makes that call throw remote::CallFailed, named as such; the verdict is always the checks' own.
//
// A chapter lists its functions once, in chapters/NN-topic/remote.def:
//   SCALEBOOK_REMOTE(3.1, dot_scores, Matrix, const Matrix&, const Matrix&)
// which makes both the proxies (remote_proxies.cpp) and the worker's table (remote_serve.cpp).
// Types travel through Codec<T>: numbers, enums, bool, Eigen matrices and vectors, std::string,
// std::vector, std::pair, Rng; a chapter's own struct adds
//   SCALEBOOK_REMOTE_FIELDS(Type, field_a, field_b, ...)
// next to its definition (in the contract header).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "scalebook/core.hpp"
#include "scalebook/random.hpp"

namespace scalebook::remote {

/// The worker failed the call: it crashed, hung, exited, or its reply made no sense.
class CallFailed : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// An exception of a type the workbook does not know, thrown by a submission's code.
class OtherException : public std::runtime_error {
 public:
  OtherException(std::string type, const std::string& message)
      : std::runtime_error(type + ": " + message), type_(std::move(type)) {}
  const std::string& type() const noexcept { return type_; }

 private:
  std::string type_;
};

// --- encoding -------------------------------------------------------------------------------------

class Writer {
 public:
  void bytes(const void* data, std::size_t size) {
    const auto* p = static_cast<const char*>(data);
    buffer_.insert(buffer_.end(), p, p + size);
  }
  template <class T>
  void raw(const T& value) {
    static_assert(std::is_trivially_copyable_v<T>);
    bytes(&value, sizeof(T));
  }
  std::vector<char>& buffer() { return buffer_; }

 private:
  std::vector<char> buffer_;
};

class Reader {
 public:
  Reader(const char* data, std::size_t size) : data_(data), size_(size) {}
  void bytes(void* out, std::size_t size) {
    if (size > size_ - at_) throw CallFailed("the reply is shorter than its contents say");
    std::memcpy(out, data_ + at_, size);
    at_ += size;
  }
  template <class T>
  T raw() {
    T value;
    bytes(&value, sizeof(T));
    return value;
  }
  std::size_t left() const { return size_ - at_; }

 private:
  const char* data_;
  std::size_t size_;
  std::size_t at_ = 0;
};

template <class T, class Enable = void>
struct Codec;  // specialised below, or by SCALEBOOK_REMOTE_FIELDS

template <class T>
struct Codec<T, std::enable_if_t<std::is_arithmetic_v<T> || std::is_enum_v<T>>> {
  static void put(Writer& out, const T& value) { out.raw(value); }
  static T get(Reader& in) { return in.raw<T>(); }
};

template <class Scalar, int R, int C, int O, int MR, int MC>
struct Codec<Eigen::Matrix<Scalar, R, C, O, MR, MC>> {
  using M = Eigen::Matrix<Scalar, R, C, O, MR, MC>;
  static void put(Writer& out, const M& m) {
    out.raw<std::int64_t>(m.rows());
    out.raw<std::int64_t>(m.cols());
    for (Index j = 0; j < m.cols(); ++j)
      for (Index i = 0; i < m.rows(); ++i) out.raw<Scalar>(m(i, j));
  }
  static M get(Reader& in) {
    const auto rows = in.raw<std::int64_t>(), cols = in.raw<std::int64_t>();
    // Bounded before anything is allocated or looped over: the elements by the bytes left, and each
    // dimension by 2^24, as a matrix of 0 rows and 2^62 columns holds no element, yet a loop over
    // its columns would never end.
    constexpr std::int64_t kMaxDimension = std::int64_t{1} << 24;
    if (rows < 0 || cols < 0 || rows > kMaxDimension || cols > kMaxDimension ||
        (rows > 0 && static_cast<std::uint64_t>(cols) >
                         in.left() / sizeof(Scalar) / static_cast<std::uint64_t>(rows)))
      throw CallFailed("a matrix in the reply has an impossible shape");
    if ((R != Eigen::Dynamic && rows != R) || (C != Eigen::Dynamic && cols != C))
      throw CallFailed("a matrix in the reply has the wrong fixed shape");
    M m(rows, cols);
    for (Index j = 0; j < cols; ++j)
      for (Index i = 0; i < rows; ++i) m(i, j) = in.raw<Scalar>();
    return m;
  }
};

template <>
struct Codec<std::string> {
  static void put(Writer& out, const std::string& s) {
    out.raw<std::uint64_t>(s.size());
    out.bytes(s.data(), s.size());
  }
  static std::string get(Reader& in) {
    const auto size = in.raw<std::uint64_t>();
    if (size > in.left()) throw CallFailed("a string in the reply is longer than the reply");
    std::string s(size, '\0');
    in.bytes(s.data(), size);
    return s;
  }
};

template <class T>
struct Codec<std::vector<T>> {
  static void put(Writer& out, const std::vector<T>& v) {
    out.raw<std::uint64_t>(v.size());
    for (const T& x : v) Codec<T>::put(out, x);
  }
  static std::vector<T> get(Reader& in) {
    const auto size = in.raw<std::uint64_t>();
    if (size > in.left()) throw CallFailed("a list in the reply is longer than the reply");
    std::vector<T> v;
    v.reserve(std::min<std::uint64_t>(size, 1u << 16));  // grown as elements arrive, never on trust
    for (std::uint64_t i = 0; i < size; ++i) v.push_back(Codec<T>::get(in));
    return v;
  }
};

template <class A, class B>
struct Codec<std::pair<A, B>> {
  static void put(Writer& out, const std::pair<A, B>& p) {
    Codec<A>::put(out, p.first);
    Codec<B>::put(out, p.second);
  }
  static std::pair<A, B> get(Reader& in) {
    A a = Codec<A>::get(in);
    B b = Codec<B>::get(in);
    return {std::move(a), std::move(b)};
  }
};

template <>
struct Codec<Rng> {
  static void put(Writer& out, const Rng& rng) { out.raw(rng.state()); }
  static Rng get(Reader& in) {
    Rng rng(0);
    rng.restore(in.raw<Rng::State>());
    return rng;
  }
};

/// Codec for a chapter's struct, field by field (the struct must be default-constructible).
#define SCALEBOOK_REMOTE_FIELDS(Type, ...)                                            \
  template <>                                                                         \
  struct scalebook::remote::Codec<Type> {                                             \
    static void put(::scalebook::remote::Writer& out, const Type& value) {            \
      const auto& [__VA_ARGS__] = value;                                              \
      ::scalebook::remote::put_all(out, __VA_ARGS__);                                 \
    }                                                                                 \
    static Type get(::scalebook::remote::Reader& in) {                                \
      Type value{};                                                                   \
      auto& [__VA_ARGS__] = value;                                                    \
      ::scalebook::remote::get_all(in, __VA_ARGS__);                                  \
      return value;                                                                   \
    }                                                                                 \
  }

template <class... T>
void put_all(Writer& out, const T&... values) {
  (Codec<std::decay_t<T>>::put(out, values), ...);
}

template <class... T>
void get_all(Reader& in, T&... values) {
  ((values = Codec<std::decay_t<T>>::get(in)), ...);
}

template <class A>
constexpr bool is_out_param = std::is_lvalue_reference_v<A> && !std::is_const_v<std::remove_reference_t<A>>;

// --- the pipes ------------------------------------------------------------------------------------

/// Writes all of data to fd (retrying short writes); false when the other end is gone.
bool write_fully(int fd, const char* data, std::size_t size);
/// Reads exactly size bytes from fd, waiting as long as it takes; false on end of file or error.
bool read_fully(int fd, char* out, std::size_t size);

// --- the proxy side (in the trusted checks process) ---------------------------------------------

/// Sends a request and returns the reply's payload; throws CallFailed when the worker fails.
std::vector<char> exchange(const char* exercise, const char* function, std::vector<char> request);

/// What the worker's memory did during one call, read from the kernel's counters for the worker
/// process (/proc/PID/status and smaps_rollup, opened by the trusted process): code in the worker
/// can neither write nor reset them (its box mounts /proc read-only; see measure_worker_memory).
struct WorkerMemory {
  std::int64_t peak_growth = 0;  ///< the peak resident set during the call (VmHWM) minus the one before
  std::int64_t referenced = 0;   ///< bytes of the worker's pages read or written during the call, still mapped after it
  std::int64_t released = 0;     ///< resident bytes before the call minus after it, when positive
  /// The least memory the call can have held at once: new memory shows in the peak; memory made
  /// resident before the call and used in it is still referenced after it, or released.
  std::int64_t used() const { return std::max(peak_growth, referenced + released); }
};

/// Starts measuring the running worker's memory (it must have answered a call already, so that it
/// waits for the next): resets its peak resident set and the accessed bits of its pages.
/// \throws CallFailed if there is no worker or its counters cannot be reset
void begin_worker_memory();
/// Reads what the worker's memory did since begin_worker_memory().
/// \throws CallFailed if the counters cannot be read
WorkerMemory end_worker_memory();

/// Measures the worker's memory around CALL, which makes one call of the worker.
template <class F>
WorkerMemory measure_worker_memory(F&& call) {
  begin_worker_memory();
  call();
  return end_worker_memory();
}

/// The running worker's process id (the one that runs the submission's code: the only process of
/// its box, below the sandbox's own), -1 when no worker runs.
int worker_process();

/// Rethrows the exception a reply describes (ShapeError, ValueError, NotImplemented, std's own
/// types by name, OtherException for the rest).
[[noreturn]] void rethrow(Reader& in, const char* exercise, const char* function);

template <class R, class... A>
R decode(const std::vector<char>& reply, const char* exercise, const char* function, A&... args);

/// Fails the call whose reply could not be decoded (WHY says how), as the worker's failure.
[[noreturn]] void bad_reply(const char* exercise, const char* function, const char* why);

template <class R, class... A>
R call(const char* exercise, const char* function, A... args) {
  Writer out;
  (Codec<std::decay_t<A>>::put(out, args), ...);
  const std::vector<char> reply = exchange(exercise, function, std::move(out.buffer()));
  try {
    return decode<R, A...>(reply, exercise, function, args...);
  } catch (const CallFailed& garbage) {
    bad_reply(exercise, function, garbage.what());
  }
}

template <class R, class... A>
R decode(const std::vector<char>& reply, const char* exercise, const char* function, A&... args) {
  Reader in(reply.data(), reply.size());
  if (in.raw<std::uint8_t>() != 0) rethrow(in, exercise, function);
  if constexpr (std::is_void_v<R>) {
    (
        [&] {
          if constexpr (is_out_param<A>) args = Codec<std::decay_t<A>>::get(in);
        }(),
        ...);
    if (in.left() != 0) throw CallFailed("the reply is longer than its contents");
  } else {
    R result = Codec<std::decay_t<R>>::get(in);
    (
        [&] {
          if constexpr (is_out_param<A>) args = Codec<std::decay_t<A>>::get(in);
        }(),
        ...);
    if (in.left() != 0) throw CallFailed("the reply is longer than its contents");
    return result;
  }
}

// --- the worker side (in the sandbox, with the submission's code) --------------------------------

using Handler = void (*)(Reader& in, Writer& out);

/// Registers a function the worker serves (done by the SCALEBOOK_REMOTE lines of remote_serve.cpp).
struct Served {
  Served(const char* exercise, const char* function, Handler handler);
};

template <class F>
struct Signature;
template <class R, class... A>
struct Signature<R (*)(A...)> {
  using Result = R;
  using Args = std::tuple<std::decay_t<A>...>;
  template <R (*fn)(A...)>
  static void serve(Reader& in, Writer& out) {
    Args args{Codec<std::decay_t<A>>::get(in)...};
    out.raw<std::uint8_t>(0);
    auto send_out_params = [&]<std::size_t... I>(std::index_sequence<I...>) {
      (
          [&] {
            if constexpr (is_out_param<A>) Codec<std::decay_t<A>>::put(out, std::get<I>(args));
          }(),
          ...);
    };
    if constexpr (std::is_void_v<R>) {
      std::apply(fn, args);
    } else {
      R result = std::apply(fn, args);
      Codec<std::decay_t<R>>::put(out, result);
    }
    send_out_params(std::index_sequence_for<A...>{});
  }
};

}  // namespace scalebook::remote

// --- the one-line-per-function lists (chapters/NN-topic/remote.def) ----------------------------

#define SCALEBOOK_REMOTE_CAT(a, b) SCALEBOOK_REMOTE_CAT_(a, b)
#define SCALEBOOK_REMOTE_CAT_(a, b) a##b
#define SCALEBOOK_REMOTE_COUNT(...) SCALEBOOK_REMOTE_COUNT_(__VA_ARGS__, 8, 7, 6, 5, 4, 3, 2, 1, 0)
#define SCALEBOOK_REMOTE_COUNT_(a1, a2, a3, a4, a5, a6, a7, a8, n, ...) n
// "T1 a1, T2 a2, ..." and "a1, a2, ..." for up to 8 parameters.
#define SCALEBOOK_REMOTE_P1(T1) T1 a1
#define SCALEBOOK_REMOTE_P2(T1, T2) T1 a1, T2 a2
#define SCALEBOOK_REMOTE_P3(T1, T2, T3) T1 a1, T2 a2, T3 a3
#define SCALEBOOK_REMOTE_P4(T1, T2, T3, T4) T1 a1, T2 a2, T3 a3, T4 a4
#define SCALEBOOK_REMOTE_P5(T1, T2, T3, T4, T5) T1 a1, T2 a2, T3 a3, T4 a4, T5 a5
#define SCALEBOOK_REMOTE_P6(T1, T2, T3, T4, T5, T6) T1 a1, T2 a2, T3 a3, T4 a4, T5 a5, T6 a6
#define SCALEBOOK_REMOTE_P7(T1, T2, T3, T4, T5, T6, T7) T1 a1, T2 a2, T3 a3, T4 a4, T5 a5, T6 a6, T7 a7
#define SCALEBOOK_REMOTE_P8(T1, T2, T3, T4, T5, T6, T7, T8) \
  T1 a1, T2 a2, T3 a3, T4 a4, T5 a5, T6 a6, T7 a7, T8 a8
#define SCALEBOOK_REMOTE_A1 a1
#define SCALEBOOK_REMOTE_A2 a1, a2
#define SCALEBOOK_REMOTE_A3 a1, a2, a3
#define SCALEBOOK_REMOTE_A4 a1, a2, a3, a4
#define SCALEBOOK_REMOTE_A5 a1, a2, a3, a4, a5
#define SCALEBOOK_REMOTE_A6 a1, a2, a3, a4, a5, a6
#define SCALEBOOK_REMOTE_A7 a1, a2, a3, a4, a5, a6, a7
#define SCALEBOOK_REMOTE_A8 a1, a2, a3, a4, a5, a6, a7, a8
#define SCALEBOOK_REMOTE_PARAMS(...) \
  SCALEBOOK_REMOTE_CAT(SCALEBOOK_REMOTE_P, SCALEBOOK_REMOTE_COUNT(__VA_ARGS__))(__VA_ARGS__)
#define SCALEBOOK_REMOTE_ARGS(...) SCALEBOOK_REMOTE_CAT(SCALEBOOK_REMOTE_A, SCALEBOOK_REMOTE_COUNT(__VA_ARGS__))

/// In remote_proxies.cpp: a definition that forwards the call to the worker.
#define SCALEBOOK_REMOTE_PROXY(id, fn, R, ...)                                                   \
  R fn(SCALEBOOK_REMOTE_PARAMS(__VA_ARGS__)) {                                                   \
    return ::scalebook::remote::call<R, __VA_ARGS__>(#id, #fn, SCALEBOOK_REMOTE_ARGS(__VA_ARGS__)); \
  }

/// In remote_serve.cpp: registers the submission's function with the worker.
#define SCALEBOOK_REMOTE_SERVE(id, fn, R, ...)                                                       \
  static const ::scalebook::remote::Served SCALEBOOK_REMOTE_CAT(served_, fn)(                        \
      #id, #fn, &::scalebook::remote::Signature<R (*)(__VA_ARGS__)>::serve<static_cast<R (*)(__VA_ARGS__)>(&fn)>);
