// Invariants that stay on in release builds. A broken invariant is a bug
// that would otherwise go on to cost a user's data (a task run twice, a
// stripe written without its lock, a buffer freed twice), so the process
// stops at once and says what broke and where, instead of going on. Cheap
// enough for the data path: one predictable branch; the message is only
// formatted when the check fails. Operating errors (EIO, ENOMEM, a missing
// member) are never asserted: they are handled where they happen.
//
//   GPR_ASSERT(op->holds_lock, "op %p writes stripe %llu without its lock", op, stripe);
#pragma once

namespace gpuraid {

// Prints "gpuraid: invariant broken: <what> (<cond>) at <file>:<line> in
// <func>" to stderr and aborts (a core dump, where enabled, shows the rest).
[[noreturn]] void invariant_failed(const char* cond, const char* file, int line, const char* func,
                                   const char* fmt, ...) __attribute__((format(printf, 5, 6), cold));

}  // namespace gpuraid

#define GPR_ASSERT(cond, ...)                                                             \
  do {                                                                                    \
    if (__builtin_expect(!(cond), 0))                                                     \
      ::gpuraid::invariant_failed(#cond, __FILE__, __LINE__, __func__, __VA_ARGS__);      \
  } while (0)
