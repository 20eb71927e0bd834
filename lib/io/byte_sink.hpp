// Where writers put their bytes. Writers (CSV, JSON, traces) stream into a ByteSink in chunks,
// so a 10M-action output never needs to exist whole in memory.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

namespace ppsched {

class ByteSink {
 public:
  virtual ~ByteSink() = default;
  virtual void write(std::string_view bytes) = 0;
};

/// Appends to a string (tests, small outputs).
class StringSink final : public ByteSink {
 public:
  explicit StringSink(std::string& out) : out_(out) {}
  void write(std::string_view bytes) override { out_.append(bytes); }

 private:
  std::string& out_;
};

/// A file could not be read or written. what() is "<path>: <reason>"; path() and reason()
/// give the parts, so a diagnostic can put the path where a location goes.
class IoError : public std::runtime_error {
 public:
  IoError(std::string path, std::string reason)
      : std::runtime_error(path + ": " + reason), path_(std::move(path)), reason_(std::move(reason)) {}
  const std::string& path() const { return path_; }
  const std::string& reason() const { return reason_; }

 private:
  std::string path_, reason_;
};

/// Writing to a pipe whose reader has gone (`ppsched ... | head -1`): not an error to report.
class BrokenPipe : public IoError {
 public:
  using IoError::IoError;
};

}  // namespace ppsched
