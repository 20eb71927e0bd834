#include "io/output_file.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>

namespace ppsched {

namespace {

constexpr std::size_t kBufferBytes = 1 << 20;

[[noreturn]] void fail(const std::string& path, const char* what, int err) {
  std::string reason = std::string("cannot ") + what + ": " + std::strerror(err);
  // EFBIG: past the file-size limit (RLIMIT_FSIZE) with SIGXFSZ ignored.
  if (err == EFBIG) reason += " (the file-size limit, ulimit -f)";
  if (err == EPIPE) throw BrokenPipe(path, reason);
  throw IoError(path == "-" ? "standard output" : path, reason);
}

bool is_special_tree(const std::string& p) { return p.rfind("/dev/", 0) == 0 || p.rfind("/proc/", 0) == 0; }

std::string dir_of(const std::string& p) {
  auto slash = p.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return p.substr(0, slash);
}

std::string base_of(const std::string& p) {
  auto slash = p.rfind('/');
  return slash == std::string::npos ? p : p.substr(slash + 1);
}

mode_t default_mode() {
  mode_t mask = umask(0);
  umask(mask);
  return 0666 & ~mask;
}

// The descriptor a path names directly, for the names shells and users write for them.
int named_descriptor(const std::string& p) {
  if (p == "-" || p == "/dev/stdout" || p == "/dev/fd/1" || p == "/proc/self/fd/1") return STDOUT_FILENO;
  if (p == "/dev/stderr" || p == "/dev/fd/2" || p == "/proc/self/fd/2") return STDERR_FILENO;
  return -1;
}

// Temporary files of the outputs being written, for the signal handler: a few at a time (a set
// committed together), and unlink() is async-signal-safe.
constexpr int kPendingSlots = 4;
char g_pending_temp[kPendingSlots][PATH_MAX];

int remember_temp(const std::string& p) {
  for (int slot = 0; slot < kPendingSlots; ++slot) {
    if (g_pending_temp[slot][0] != '\0') continue;
    std::size_t n = std::min(p.size(), sizeof g_pending_temp[slot] - 1);
    std::memcpy(g_pending_temp[slot], p.data(), n);
    g_pending_temp[slot][n] = '\0';
    return slot;
  }
  return -1;  // more at once than the slots: that one is not removed on a signal
}

void forget_temp(int slot) {
  if (slot >= 0) g_pending_temp[slot][0] = '\0';
}

extern "C" void remove_temp_and_exit(int sig) {
  for (auto& temp : g_pending_temp)
    if (temp[0] != '\0') ::unlink(temp);
  _exit(128 + sig);
}

}  // namespace

bool handle_signal_unless_ignored(int sig, void (*handler)(int)) {
  struct sigaction old {};
  if (::sigaction(sig, nullptr, &old) == 0 && !(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_IGN) return false;
  struct sigaction sa {};
  sa.sa_handler = handler;
  sigemptyset(&sa.sa_mask);
  return ::sigaction(sig, &sa, nullptr) == 0;
}

void install_output_signal_handlers() {
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGXFSZ}) handle_signal_unless_ignored(sig, remove_temp_and_exit);
}

OutputFile::OutputFile(std::string path) : path_(std::move(path)) {
  buffer_.reserve(kBufferBytes);
  if (int fd = named_descriptor(path_); fd >= 0) {
    // Standard output or error, whatever it is connected to: writing through the descriptor
    // keeps the shell's redirection (and its file offset) intact.
    fd_ = fd;
    guard_ = true;
    return;
  }
  struct stat lst {};
  bool exists = ::lstat(path_.c_str(), &lst) == 0;
  // Anything reached through /dev or /proc is a node or a descriptor: never rename over it.
  bool atomic = !is_special_tree(path_) && (!exists || S_ISREG(lst.st_mode) || S_ISLNK(lst.st_mode));
  target_path_ = path_;
  mode_t mode = exists ? (lst.st_mode & 07777) : default_mode();
  if (atomic && exists && S_ISLNK(lst.st_mode)) {
    // Follow the link to a regular file and replace that file, keeping the link. A link that
    // leads to anything else, or through /dev or /proc, is written in place.
    atomic = false;
    struct stat st {};
    char resolved[PATH_MAX];
    if (::stat(path_.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::realpath(path_.c_str(), resolved) != nullptr &&
        !is_special_tree(resolved)) {
      atomic = true;
      target_path_ = resolved;
      mode = st.st_mode & 07777;
    }
  }
  if (!atomic) {
    // O_APPEND: a descriptor path such as /dev/fd/3 may lead to a file the shell opened.
    fd_ = ::open(path_.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
    if (fd_ < 0) fail(path_, "open for writing", errno);
    owns_fd_ = true;
    guard_ = ::isatty(fd_) == 1;  // a terminal named by path (/dev/tty, /dev/pts/N) is guarded too
    return;
  }
  std::string tmpl = dir_of(target_path_) + "/." + base_of(target_path_) + ".ppsched-tmp-XXXXXX";
  fd_ = ::mkstemp(tmpl.data());
  if (fd_ < 0) fail(path_, "create a temporary file beside it", errno);
  owns_fd_ = true;
  temp_path_ = tmpl;
  temp_slot_ = remember_temp(temp_path_);
  if (::fchmod(fd_, mode) != 0) {
    int err = errno;
    abort();
    fail(path_, "set the mode of its temporary file", err);
  }
}

OutputFile::~OutputFile() {
  if (!committed_) abort();
}

void OutputFile::abort() noexcept {
  if (owns_fd_ && fd_ >= 0) ::close(fd_);
  fd_ = -1;
  owns_fd_ = false;
  if (!temp_path_.empty()) ::unlink(temp_path_.c_str());
  temp_path_.clear();
  forget_temp(temp_slot_);
  temp_slot_ = -1;
}

void OutputFile::write(std::string_view bytes) {
  if (buffer_.size() + bytes.size() > kBufferBytes) flush();
  if (bytes.size() >= kBufferBytes) {
    if (!guard_) {  // a writer's own megabyte goes out as it is, not copied first
      write_all(bytes.data(), bytes.size());
      return;
    }
    buffer_.assign(bytes);
    flush();
    return;
  }
  buffer_.append(bytes);
}

void OutputFile::flush() {
  if (guard_) {
    guarded_.clear();
    log_guard_.feed(buffer_, guarded_);
    write_all(guarded_.data(), guarded_.size());
  } else {
    write_all(buffer_.data(), buffer_.size());
  }
  buffer_.clear();
}

void OutputFile::write_all(const char* p, std::size_t left) {
  while (left > 0) {
    ssize_t n = ::write(fd_, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      fail(path_, "write", errno);
    }
    p += n;
    left -= static_cast<std::size_t>(n);
  }
}

void OutputFile::finish() {
  flush();
  if (guard_) {
    guarded_.clear();
    log_guard_.finish(guarded_);
    write_all(guarded_.data(), guarded_.size());
  }
  if (owns_fd_) {
    int fd = fd_;
    fd_ = -1;
    owns_fd_ = false;
    if (::close(fd) != 0) fail(path_, "write", errno);
  }
}

void OutputFile::commit() {
  finish();
  if (!temp_path_.empty()) {
    if (::rename(temp_path_.c_str(), target_path_.c_str()) != 0) fail(path_, "replace", errno);
    temp_path_.clear();
    forget_temp(temp_slot_);
    temp_slot_ = -1;
  }
  committed_ = true;
}

void commit_together(const std::vector<OutputFile*>& files) {
  // Every byte first: a failure here leaves every old file as it was.
  for (OutputFile* f : files) f->finish();
  // Then the renames, each old file kept under a link until all are in place, so a failed
  // rename puts back the ones done before it.
  struct Done {
    OutputFile* file;
    std::string backup;  // empty: there was no old file
  };
  std::vector<Done> done;
  const auto roll_back = [&] {
    for (auto it = done.rbegin(); it != done.rend(); ++it) {
      if (it->backup.empty())
        ::unlink(it->file->target_path_.c_str());
      else
        ::rename(it->backup.c_str(), it->file->target_path_.c_str());
    }
  };
  for (OutputFile* f : files) {
    if (f->temp_path_.empty()) {  // written in place (a device, standard output): nothing to rename
      f->committed_ = true;
      continue;
    }
    std::string backup;
    struct stat st {};
    if (::lstat(f->target_path_.c_str(), &st) == 0) {
      backup = f->temp_path_ + ".old";
      if (::link(f->target_path_.c_str(), backup.c_str()) != 0) {
        const int err = errno;
        roll_back();
        fail(f->path_, "keep the old file while the set is replaced", err);
      }
    }
    if (::rename(f->temp_path_.c_str(), f->target_path_.c_str()) != 0) {
      const int err = errno;
      if (!backup.empty()) ::unlink(backup.c_str());
      roll_back();
      fail(f->path_, "replace", err);
    }
    done.push_back({f, backup});
    f->temp_path_.clear();
    forget_temp(f->temp_slot_);
    f->temp_slot_ = -1;
    f->committed_ = true;
  }
  for (const Done& d : done)
    if (!d.backup.empty()) ::unlink(d.backup.c_str());
}

}  // namespace ppsched
