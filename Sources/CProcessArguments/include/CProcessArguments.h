// The argument vector for the static Swift runtime, taken from the C runtime (arguments.c).
// Nothing here is called from Swift: the runtime's CommandLine calls these by name.
#ifndef C_PROCESS_ARGUMENTS_H
#define C_PROCESS_ARGUMENTS_H

/// The process's arguments as the C runtime passed them to constructors, unless overridden.
__attribute__((swiftcall)) char **_swift_stdlib_getUnsafeArgvArgc(int *outArgLen);

/// Replaces what `_swift_stdlib_getUnsafeArgvArgc` returns (the runtime's testing hook).
void _swift_stdlib_overrideUnsafeArgvArgc(char **argv, int argc);

#endif
