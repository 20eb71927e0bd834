// An output file that is never left half-written.
//
// A regular file (or a path that does not exist yet) is written to a temporary file in the
// same directory and renamed over the target by commit(); if commit() is never reached the
// temporary file is removed, so the old content survives any failure. Anything else that
// exists (a device, a FIFO, a terminal, /dev/stdout) is written in place: renaming over it
// would replace the node itself when running as root. "-" and /dev/stdout are standard output
// (written through descriptor 1, so a shell redirection and its offset are kept).
//
// SIGINT, SIGTERM, SIGHUP and SIGXFSZ during a write: install_output_signal_handlers() makes
// them remove the temporary file and exit with 128 + the signal number (130 for Ctrl-C). A
// signal the process was started with ignored (`nohup`, `trap '' XFSZ`, the SIGINT of a shell's
// background job) stays ignored: with SIGXFSZ ignored a write past the file-size limit fails
// with EFBIG, which write() reports as an IoError naming the path, like ENOSPC on a full disk.
#pragma once

#include <string>
#include <string_view>

#include "io/byte_sink.hpp"

namespace ppsched {

/// Installs the handlers described above; call once at program start.
void install_output_signal_handlers();

/// Installs `handler` for `sig` unless `sig` is ignored now (SIG_IGN, inherited from the parent
/// or left so by install_output_signal_handlers): what the parent asked to ignore stays ignored.
/// True when it installed the handler. Every handler ppsched installs goes through this.
bool handle_signal_unless_ignored(int sig, void (*handler)(int));

class OutputFile final : public ByteSink {
 public:
  /// Opens the output; throws IoError naming the path when it cannot.
  explicit OutputFile(std::string path);
  ~OutputFile() override;
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  void write(std::string_view bytes) override;
  /// Flushes and puts the file in place. Throws IoError (BrokenPipe for a closed pipe).
  void commit();

  const std::string& path() const { return path_; }
  /// True when the output is written through a temporary file and a rename.
  bool atomic() const { return !temp_path_.empty(); }

 private:
  void flush();
  void abort() noexcept;

  std::string path_;         // as given
  std::string target_path_;  // the file renamed over (symlinks resolved)
  std::string temp_path_;    // empty when writing in place
  int fd_ = -1;
  bool owns_fd_ = false;
  bool committed_ = false;
  std::string buffer_;
};

}  // namespace ppsched
