// Reading input files and writing output files safely.
//
// Inputs (profiles, measurement files, models, traces) are things users pass around, so a
// path may name a directory, a FIFO or a device. ReadRegularFile checks what the path is
// before reading (a FIFO is opened with O_NONBLOCK and refused, never waited on) and names the
// file in every error.
//
// Outputs are written atomically: WriteFileAtomic writes a temporary file beside the target
// (same directory, so the rename cannot cross file systems), checks every write, flushes it to
// disk, closes it and only then renames it over the target. A full disk or a killed process
// leaves the old file as it was and no temporary file behind. A target that exists and is not
// a regular file (/dev/stdout, /dev/full, a FIFO with a reader) is written in place, with
// every write checked; a directory is refused.
//
//   Expected<std::string> text = ReadRegularFile(path, "profile");
//   Status s = WriteFileAtomic(out_path, json.dump(2) + "\n");   // IoError names the path
//   Status t = RefuseOutputOverInputs("-o", out_path, {inputs...}); // -o m.json with m.json read
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace ftax {

// Checks that `path` names a regular file (following symlinks); `what` names it in errors:
// NotFound "cannot open profile 'p.json': no such file", InvalidInput "profile 'dir' is a
// directory, not a file" or "... is a FIFO, not a regular file".
Status CheckRegularFile(const std::string& path, const std::string& what);

// The whole contents of a regular file (see CheckRegularFile for the errors).
Expected<std::string> ReadRegularFile(const std::string& path, const std::string& what);

// Replaces `path` with `contents` atomically (see above). Errors are IoError naming the path
// and the reason, except InvalidInput for a directory.
Status WriteFileAtomic(const std::string& path, std::string_view contents);

// InvalidInput when `path` is an existing directory: "`flag` 'DIR' is a directory".
Status CheckOutputPath(const std::string& flag, const std::string& path);

// True when both paths exist and are the same file (same device and inode).
bool SameFile(const std::string& a, const std::string& b);

// True when both name the same file: SameFile, or the same path once made absolute and
// normalized (for files that do not exist yet).
bool SamePath(const std::string& a, const std::string& b);

// InvalidInput when output `path` (given with `flag`) is one of `inputs` or a directory.
Status RefuseOutputOverInputs(const std::string& flag, const std::string& path,
                              const std::vector<std::string>& inputs);

}  // namespace ftax
