// Errors as values.
//
// Library code in ftax never prints and never exits: a function that can fail returns
// `Status` (or `Expected<T>`), whose message names the file, node, op or field at fault.
// Only the CLI turns a failed Status into a message, a hint and an exit code.
//
//   Expected<Graph> g = LoadOnnx(path, options);
//   if (!g.ok()) return g.status();          // propagate with context intact
//   UseGraph(g.value());
#pragma once

#include <optional>
#include <string>
#include <utility>

namespace ftax {

enum class ErrorCode {
  kOk = 0,
  kInvalidInput,   // the user's file or argument is malformed
  kNotFound,       // a path or a named entity does not exist
  kUnsupported,    // valid, but ftax does not handle it
  kInternal,       // a bug in ftax
  kIoError,        // the job ran, but a file could not be written (disk full, no permission)
};

class Status {
 public:
  Status() = default;
  Status(ErrorCode code, std::string message) : code_(code), message_(std::move(message)) {}
  static Status Ok() { return Status(); }

  bool ok() const { return code_ == ErrorCode::kOk; }
  ErrorCode code() const { return code_; }
  const std::string& message() const { return message_; }

  // Returns a copy whose message is prefixed with `context: `.
  Status WithContext(const std::string& context) const {
    if (ok()) return *this;
    return Status(code_, context + ": " + message_);
  }

 private:
  ErrorCode code_ = ErrorCode::kOk;
  std::string message_;
};

inline Status InvalidInput(std::string m) { return Status(ErrorCode::kInvalidInput, std::move(m)); }
inline Status NotFound(std::string m) { return Status(ErrorCode::kNotFound, std::move(m)); }
inline Status Unsupported(std::string m) { return Status(ErrorCode::kUnsupported, std::move(m)); }
inline Status Internal(std::string m) { return Status(ErrorCode::kInternal, std::move(m)); }
inline Status IoError(std::string m) { return Status(ErrorCode::kIoError, std::move(m)); }

// A value or the Status that explains why there is none.
template <typename T>
class Expected {
 public:
  Expected(T value) : value_(std::move(value)) {}  // NOLINT: implicit by design
  Expected(Status status) : status_(std::move(status)) {}  // NOLINT
  bool ok() const { return value_.has_value(); }
  const Status& status() const { return status_; }
  T& value() { return *value_; }
  const T& value() const { return *value_; }
  T* operator->() { return &*value_; }
  const T* operator->() const { return &*value_; }

 private:
  std::optional<T> value_;
  Status status_;
};

}  // namespace ftax
