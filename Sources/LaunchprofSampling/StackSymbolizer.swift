// Placeholder: the symbolizer lands with the crash-stack work.
