// An output file that is never left half-written.
//
// A regular file (or a path that does not exist yet) is written to a temporary file in the
// same directory and renamed over the target by commit(); if commit() is never reached the
// temporary file is removed, so the old content survives any failure. Anything else that
// exists (a device, a FIFO, a terminal, /dev/stdout) is written in place: renaming over it
// would replace the node itself when running as root. "-" and /dev/stdout are standard output
// (written through descriptor 1, so a shell redirection and its offset are kept). What goes to
// standard output or error passes io/log_text.hpp's LogGuard: no line of it can start a GitHub
// workflow command or carry a terminal escape (docs/ci.md, "What ppsched never prints").
//
// SIGINT, SIGTERM, SIGHUP and SIGXFSZ during a write: install_output_signal_handlers() makes
// them remove the temporary file and exit with 128 + the signal number (130 for Ctrl-C). A
// signal the process was started with ignored (`nohup`, `trap '' XFSZ`, the SIGINT of a shell's
// background job) stays ignored: with SIGXFSZ ignored a write past the file-size limit fails
// with EFBIG, which write() reports as an IoError naming the path, like ENOSPC on a full disk.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "io/byte_sink.hpp"
#include "io/log_text.hpp"

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
  /// Flushes and closes, leaving the temporary file unrenamed (commit_together renames).
  void finish();

  const std::string& path() const { return path_; }
  /// True when the output is written through a temporary file and a rename.
  bool atomic() const { return !temp_path_.empty(); }

 private:
  void flush();
  void write_all(const char* p, std::size_t left);
  void abort() noexcept;

  friend void commit_together(const std::vector<OutputFile*>& files);

  std::string path_;         // as given
  std::string target_path_;  // the file renamed over (symlinks resolved)
  std::string temp_path_;    // empty when writing in place
  int fd_ = -1;
  bool owns_fd_ = false;
  bool committed_ = false;
  int temp_slot_ = -1;  // its place among the temporaries a signal removes
  bool guard_ = false;  // standard output or error: through log_guard_
  LogGuard log_guard_;
  std::string buffer_, guarded_;
};

/// Commits a set of outputs so that they are all new or all old: every file is written in full
/// first (a failure leaves every old file), then each is renamed into place while its old
/// content is kept under a link, and a failed rename puts back those renamed before it. Throws
/// IoError naming the file that failed. (A SIGKILL between two renames can still part them.)
void commit_together(const std::vector<OutputFile*>& files);

}  // namespace ppsched
