// Reading a file a command was given (a bundle, a signature, a trusted key): the whole of it, and
// when it is missing, a sentence that names what the file was meant to be.
#pragma once

#include "sealtrain/base/result.h"

#include <string>

namespace sealtrain::ctl {

// The file's bytes (base/byte_io.h's readWholeFile). NotFound reads "Cannot read the <what>
// '<path>'; check the path."; other errors are readWholeFile's, which name the file too.
[[nodiscard]] Result<std::string> readInputFile(const std::string& path, const std::string& what);

}  // namespace sealtrain::ctl
