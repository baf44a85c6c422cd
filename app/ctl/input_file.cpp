// A command's input file read whole, its NotFound error naming what the file was meant to be.
#include "input_file.h"

#include "sealtrain/base/byte_io.h"

namespace sealtrain::ctl {

Result<std::string> readInputFile(const std::string& path, const std::string& what)
{
    auto content = readWholeFile(path);
    if (!content && content.error().code() == ErrorCode::NotFound)
        return Error(ErrorCode::NotFound,
                     "Cannot read the " + what + " '" + path + "'; check the path.");
    return content;
}

}  // namespace sealtrain::ctl
