#include "io/output_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>

namespace ppsched {

namespace {

constexpr std::size_t kBufferBytes = 1 << 20;

[[noreturn]] void fail(const std::string& path, const char* what, int err) {
  std::string reason = std::string("cannot ") + what + ": " + std::strerror(err);
  if (err == EPIPE) throw BrokenPipe(path, reason);
  throw IoError(path, reason);
}

bool is_special_tree(const std::string& p) {
  return p.rfind("/dev/", 0) == 0 || p.rfind("/proc/", 0) == 0;
}

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

}  // namespace

OutputFile::OutputFile(std::string path) : path_(std::move(path)) {
  buffer_.reserve(kBufferBytes);
  if (path_ == "-") {
    fd_ = STDOUT_FILENO;
    return;
  }
  struct stat lst {};
  bool exists = ::lstat(path_.c_str(), &lst) == 0;
  bool atomic = !exists || S_ISREG(lst.st_mode);
  target_path_ = path_;
  mode_t mode = exists ? (lst.st_mode & 07777) : default_mode();
  if (exists && S_ISLNK(lst.st_mode)) {
    // Follow the link to a regular file and replace that file, keeping the link. A link into
    // /dev or /proc (/dev/stdout -> /proc/self/fd/1) is written in place.
    struct stat st {};
    char resolved[PATH_MAX];
    if (::stat(path_.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
        ::realpath(path_.c_str(), resolved) != nullptr && !is_special_tree(resolved)) {
      atomic = true;
      target_path_ = resolved;
      mode = st.st_mode & 07777;
    }
  }
  if (!atomic) {
    fd_ = ::open(path_.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd_ < 0) fail(path_, "open for writing", errno);
    owns_fd_ = true;
    return;
  }
  std::string tmpl = dir_of(target_path_) + "/." + base_of(target_path_) + ".ppsched-tmp-XXXXXX";
  fd_ = ::mkstemp(tmpl.data());
  if (fd_ < 0) fail(path_, "create a temporary file beside it", errno);
  owns_fd_ = true;
  temp_path_ = tmpl;
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
}

void OutputFile::write(std::string_view bytes) {
  if (buffer_.size() + bytes.size() > kBufferBytes) flush();
  if (bytes.size() >= kBufferBytes) {
    buffer_.assign(bytes);
    flush();
    return;
  }
  buffer_.append(bytes);
}

void OutputFile::flush() {
  const char* p = buffer_.data();
  std::size_t left = buffer_.size();
  while (left > 0) {
    ssize_t n = ::write(fd_, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      fail(path_, "write", errno);
    }
    p += n;
    left -= static_cast<std::size_t>(n);
  }
  buffer_.clear();
}

void OutputFile::commit() {
  flush();
  if (owns_fd_) {
    int fd = fd_;
    fd_ = -1;
    owns_fd_ = false;
    if (::close(fd) != 0) fail(path_, "write", errno);
  }
  if (!temp_path_.empty()) {
    if (::rename(temp_path_.c_str(), target_path_.c_str()) != 0) fail(path_, "replace", errno);
    temp_path_.clear();
  }
  committed_ = true;
}

}  // namespace ppsched
