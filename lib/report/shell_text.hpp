// POSIX sh text from values that may be the user's (a schedule's path, a model name): the
// command lines and comments of the scripts ppsched writes, so no value can end its word, start
// a command or a comment, or be expanded by the shell.
//
//   shell_quote("--parallelism.pipeline_parallel_degree") -> unchanged: nothing in it is special
//   shell_quote("it's $(x)")    -> "'it'\\''s $(x)'"   single quotes, each ' as '\''
//   shell_quote("")             -> "''"
//   shell_command({"./run_train.sh", "a b"})  -> "./run_train.sh 'a b'"
//   shell_comment("x\nrm -rf /")              -> "# x\\x0Arm -rf /\n"
//
// Inside single quotes sh keeps every byte as it is, so a value that is not UTF-8 or holds a
// newline reaches the program unchanged; only NUL, which no argument can hold, is refused.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace ppsched {

/// One word for sh: `word` itself when it holds only letters, digits and `_-./:,+@%` (and is not
/// empty), else single-quoted. Throws UserError when `word` holds a NUL byte.
std::string shell_quote(std::string_view word);

/// The words quoted and joined by spaces: one command line that sh splits back into `args`.
std::string shell_command(const std::vector<std::string>& args);

/// `NAME=value` for the start of a command, the value quoted. `name` must be a shell variable
/// name (letters, digits, '_', not starting with a digit): a bad one is a caller's bug, and throws
/// std::invalid_argument.
std::string shell_assignment(std::string_view name, std::string_view value);

/// "# " + `text` made printable (one line, no control character, valid UTF-8) + "\n".
std::string shell_comment(std::string_view text);

}  // namespace ppsched
