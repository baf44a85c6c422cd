// MPI library identification without initialising MPI.
#include "sealtrain/trainer/platform_info.h"

#include <mpi.h>

#include <array>

namespace sealtrain::trainer {

std::string mpiLibraryVersion()
{
    std::array<char, MPI_MAX_LIBRARY_VERSION_STRING> buffer{};
    int length = 0;
    if (MPI_Get_library_version(buffer.data(), &length) != MPI_SUCCESS)
        return {};
    std::string text(buffer.data(), static_cast<std::size_t>(length));
    if (const auto newline = text.find_first_of("\r\n,"); newline != std::string::npos)
        text.resize(newline);
    return text;
}

}  // namespace sealtrain::trainer
